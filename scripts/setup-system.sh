#!/usr/bin/env bash
# Debian packages the test suite uses as real peers, each installed only when missing and when
# apt-get can run (otherwise their tests skip). Says what it installs and why, and shows apt's
# own output, so nothing is installed in silence:
#   chromium + chromium-driver  the review page and `triagebot setup` tested in a real browser
#   redis-server                the Redis/RQ queue path (TRIAGEBOT_QUEUE_URL)
#   postgresql                  TRIAGEBOT_DB=postgresql:// (a throwaway server per test run)
set -uo pipefail
need=()
why=()
want() { need+=("$1"); why+=("  $1: $2"); }
command -v chromium >/dev/null 2>&1 || want chromium "headless browser for the review page and setup-flow tests"
command -v chromedriver >/dev/null 2>&1 || want chromium-driver "lets selenium drive that browser"
command -v redis-server >/dev/null 2>&1 || want redis-server "the Redis/RQ queue tests"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || want postgresql "the PostgreSQL database tests"
if [ ${#need[@]} -eq 0 ]; then
  echo "setup-system: chromium, chromium-driver, redis-server and postgresql already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-system: apt-get not found; skipping ${need[*]} (their tests will be skipped)" >&2; exit 0
fi
echo "setup-system: installing Debian packages for the tests (with their dependencies):"
printf '%s\n' "${why[@]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo -n"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q || echo "setup-system: apt-get update failed; trying the install anyway" >&2
$SUDO apt-get install -y -q --no-install-recommends "${need[@]}" \
  || echo "setup-system: could not install ${need[*]}; their tests will be skipped" >&2
exit 0
