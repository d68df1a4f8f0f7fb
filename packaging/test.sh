#!/usr/bin/env bash
# The whole test suite: set-up, lint (ruff), types (mypy), then pytest offscreen.
# ENGRAM_BUNDLE=1 adds the bundle's build and smoke test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/packaging/bootstrap.sh" --for test
# ENGRAM_BUNDLE=1 also builds the PyInstaller bundle and smoke-tests it (a few minutes).
if [ "${ENGRAM_BUNDLE:-0}" = 1 ]; then bash "$root/packaging/bootstrap.sh" --for bundle; fi
venv="${ENGRAM_VENV:-$root/.venv}"
cd "$root"
echo "== ruff"
"$venv/bin/ruff" check app tests
"$venv/bin/ruff" format --check app tests
echo "== mypy"
"$venv/bin/mypy"
echo "== pytest"
export QT_QPA_PLATFORM=offscreen
exec "$venv/bin/python" -m pytest "$@"
