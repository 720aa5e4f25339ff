#!/usr/bin/env bash
# Set up and run every check: creates .venv with the test extras, installs the Debian
# tools the tests use (when missing), then runs ruff, mypy and the whole pytest suite
# (which builds the wheel and runs it from a venv outside the clone: tests/packaging),
# then the TypeScript client's tests against a live `wolfie api` (clients/typescript).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k recall`.
#
# Set-up is incremental: pip runs only when pyproject.toml differs from the copy stamped
# into .venv by the last install that succeeded. Each stage prints how long it took, and
# the summary at the end lists them all (set-up, lint, types, tests, TypeScript).
set -euo pipefail
cd "$(dirname "$0")/.."

TIMES=()
stage_start=$SECONDS
stage() {  # stage NAME: record the time since the last stage ended
  local took=$((SECONDS - stage_start))
  TIMES+=("$(printf '%-10s %4d:%02d' "$1" $((took / 60)) $((took % 60)))")
  echo "== $1 took $((took / 60))m$((took % 60))s"
  stage_start=$SECONDS
}
summary() {
  echo "== time per stage (min:s)"
  printf '   %s\n' "${TIMES[@]}"
}
trap summary EXIT

PYTHON=${PYTHON:-python3}
STAMP=.venv/.installed-pyproject.toml
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
if ! cmp -s pyproject.toml "$STAMP"; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[all,test,st]'
  cp pyproject.toml "$STAMP"
else
  echo "== set-up: .venv is current with pyproject.toml (delete $STAMP to reinstall)"
fi

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
stage set-up

export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1 RAGAS_DO_NOT_TRACK=true
export HF_HUB_OFFLINE=1 PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=180

.venv/bin/ruff check packs wolfie tasks flows evals deployments tests scripts benchmarks
.venv/bin/ruff format --check .
stage lint
.venv/bin/mypy
stage types
.venv/bin/python -m pytest "$@"
stage tests
bash clients/typescript/run-tests.sh
stage TypeScript
