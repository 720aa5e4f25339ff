#!/usr/bin/env bash
# The TypeScript client's tests (node's test runner) against a live `wolfie api` that the
# tests start: installs the dev dependencies exactly as the lockfile pins them, compiles
# with tsc, checks src/schema.ts against openapi.json, runs the tests.
# WOLFIE_BIN names the wolfie command (default: the repository's .venv/bin/wolfie).
set -euo pipefail
cd "$(dirname "$0")"
command -v npm >/dev/null || { echo "npm (Node 20) is needed for the TypeScript client's tests" >&2; exit 1; }
export WOLFIE_BIN="${WOLFIE_BIN:-$(cd ../.. && pwd)/.venv/bin/wolfie}"
# The tests start a live `wolfie api`: without one to start, say so now, not after a wait.
if ! [ -x "$WOLFIE_BIN" ] && ! command -v "$WOLFIE_BIN" >/dev/null 2>&1; then
  echo "No wolfie command at $WOLFIE_BIN: the TypeScript client's tests start a live" \
    "'wolfie api'. Run 'bash scripts/test.sh' (it makes .venv) or set WOLFIE_BIN." >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
npm test
