#!/usr/bin/env bash
# The test command of the README and of CI: set up (idempotent), then run the whole suite.
# When PostgreSQL's server binaries are present, a throwaway cluster on 127.0.0.1 backs the
# PostgreSQL tests (TRIAGEBOT_TEST_POSTGRES_URL); it is stopped and removed afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
if [ -z "${TRIAGEBOT_TEST_POSTGRES_URL:-}" ]; then
  # shellcheck source=scripts/pg-throwaway.sh
  . scripts/pg-throwaway.sh || true
fi
set +e
.venv/bin/python -m pytest -q "$@"
status=$?
[ -n "${PG_STOP:-}" ] && eval "$PG_STOP"
exit $status
