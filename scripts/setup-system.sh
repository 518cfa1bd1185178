#!/usr/bin/env bash
# Debian packages the test suite uses as real peers: chromium + chromedriver (the review page in a
# real browser), redis-server (the RQ queue path), postgresql (TRIAGEBOT_DB=postgresql://).
# Installed only when missing and when apt-get can run; otherwise those tests skip.
set -uo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
[ ${#need[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: apt-get not found; skipping ${need[*]} (their tests will be skipped)" >&2; exit 0
fi
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo -n"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null 2>&1 || true
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
  || echo "setup: could not install ${need[*]}; their tests will be skipped" >&2
exit 0
