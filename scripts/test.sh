#!/usr/bin/env bash
# Set up and run every check: creates .venv with the test extras, installs the Debian
# tools the tests use (when missing), then runs ruff, mypy and the whole pytest suite
# (which builds the wheel and runs it from a venv outside the clone: tests/packaging),
# then the TypeScript client's tests against a live `wolfie api` (clients/typescript).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k recall`.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[all,test,st]'

# Debian packages the tests need (speech fixtures, media muxing, the UI browser test).
DEBIAN_PACKAGES=(espeak-ng ffmpeg pocketsphinx-testdata chromium)
missing=()
for package in "${DEBIAN_PACKAGES[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null; then
  echo "Installing Debian packages: ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1 RAGAS_DO_NOT_TRACK=true
export HF_HUB_OFFLINE=1 PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=180

.venv/bin/ruff check packs wolfie tasks flows evals deployments tests scripts benchmarks
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
bash clients/typescript/run-tests.sh
