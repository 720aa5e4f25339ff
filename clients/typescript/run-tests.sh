#!/usr/bin/env bash
# The TypeScript client's tests (node's test runner) against a live `wolfie api` that the
# tests start: installs the dev dependencies exactly as the lockfile pins them, compiles
# with tsc, checks src/schema.ts against openapi.json, runs the tests.
# WOLFIE_BIN names the wolfie command (default: the repository's .venv/bin/wolfie).
set -euo pipefail
cd "$(dirname "$0")"
command -v npm >/dev/null || { echo "npm (Node 20) is needed for the TypeScript client's tests" >&2; exit 1; }
export WOLFIE_BIN="${WOLFIE_BIN:-$(cd ../.. && pwd)/.venv/bin/wolfie}"
npm ci --no-audit --no-fund --loglevel=error
npm test
