# Sourced by scripts/test.sh: start a disposable PostgreSQL on a free loopback port and export
# TRIAGEBOT_TEST_POSTGRES_URL and PG_STOP. Does nothing (returns 1) when it cannot.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] || return 1
pg_dir=$(mktemp -d /tmp/triagebot-pg.XXXXXX)
pg_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pg_run=""
if [ "$(id -u)" -eq 0 ]; then chown postgres "$pg_dir" 2>/dev/null && pg_run="runuser -u postgres --" || return 1; fi
$pg_run "$pg_bin/initdb" -D "$pg_dir/data" -U postgres -A trust >/dev/null 2>&1 || return 1
$pg_run "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w \
  -o "-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null 2>&1 || return 1
export TRIAGEBOT_TEST_POSTGRES_URL="postgresql://postgres@127.0.0.1:$pg_port/postgres"
PG_STOP="$pg_run $pg_bin/pg_ctl -D $pg_dir/data -m fast stop >/dev/null 2>&1; rm -rf $pg_dir"
return 0
