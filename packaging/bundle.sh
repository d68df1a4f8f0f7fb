#!/usr/bin/env bash
# Build a onedir bundle of Engram (the `engram` command: CLI and inspector) with PyInstaller,
# then smoke-test it. The bundle lands in dist/engram/ (ENGRAM_BUNDLE_DIST to change);
# run it as dist/engram/engram. Needs no display: the inspector is tried offscreen.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/packaging/bootstrap.sh" --for bundle
venv="${ENGRAM_VENV:-$root/.venv}"
dist="${ENGRAM_BUNDLE_DIST:-$root/dist}"
work="${ENGRAM_BUNDLE_WORK:-$root/build/pyinstaller}"
echo "== building the bundle in $dist/engram"
"$venv/bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath "$work" "$root/packaging/engram.spec"
# The third-party notices again, now that the bundle exists: with the system libraries
# PyInstaller copied in (under their Debian copyright files). Help > About reads the copy
# inside; another and the LICENSE go beside the program, where a person looks first.
notices="$dist/engram/_internal/engram/data/licences/THIRD_PARTY_NOTICES.txt"
with=()
if "$venv/bin/python" -c 'import psycopg' 2>/dev/null; then with=(--with psycopg --with psycopg-binary); fi
"$venv/bin/python" "$root/packaging/third_party_notices.py" --bundle "$notices" "${with[@]}" \
  --libraries "$dist/engram/_internal" >/dev/null
cp "$notices" "$dist/engram/THIRD_PARTY_NOTICES.txt"
cp "$root/LICENSE" "$dist/engram/LICENSE"
echo "== smoke test"
bash "$root/packaging/smoke_bundle.sh" "$dist/engram/engram"
echo "== bundle: $(du -sh "$dist/engram" | cut -f1) in $dist/engram"
