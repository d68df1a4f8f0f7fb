#!/usr/bin/env bash
# The whole test suite: set-up, lint (ruff), types (mypy), then pytest offscreen.
# ENGRAM_BUNDLE=1 adds the bundle's build and smoke test; ENGRAM_DEB=1 the .deb's (built
# from the bundle, installed with apt-get, run and removed: needs root); ENGRAM_LOWEST=1 first
# tries the lowest declared versions (packaging/lowest.sh: the unit tests and the bundle).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/packaging/bootstrap.sh" --for test
# ENGRAM_BUNDLE=1 also builds the PyInstaller bundle and smoke-tests it (a few minutes).
if [ "${ENGRAM_BUNDLE:-0}" = 1 ]; then bash "$root/packaging/bootstrap.sh" --for bundle; fi
# deb.sh's tools: patchelf (build paths out of Python's modules; the default run's .deb
# layout test builds one from a small bundle) and lintian (the full .deb test).
deb_tools="patchelf"
if [ "${ENGRAM_DEB:-0}" = 1 ]; then
  bash "$root/packaging/bootstrap.sh" --for bundle
  deb_tools="lintian patchelf"
fi
for tool in $deb_tools; do
  if ! command -v "$tool" >/dev/null && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$tool" >/dev/null
  fi
done
venv="${ENGRAM_VENV:-$root/.venv}"
cd "$root"
if [ "${ENGRAM_LOWEST:-0}" = 1 ]; then
  echo "== the lowest declared versions"
  bash "$root/packaging/lowest.sh"
fi
echo "== ruff"
"$venv/bin/ruff" check app tests
"$venv/bin/ruff" format --check app tests
echo "== mypy"
"$venv/bin/mypy"
echo "== pytest"
export QT_QPA_PLATFORM=offscreen
# One worker per core (pytest-xdist); worksteal evens out the few long tests at the end.
exec "$venv/bin/python" -m pytest -n auto --dist worksteal "$@"
