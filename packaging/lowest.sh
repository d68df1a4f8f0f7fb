#!/usr/bin/env bash
# Try the lower bounds pyproject.toml declares (issue 20 item 4): install the lowest version
# of every direct requirement (uv's --resolution lowest-direct) into a separate virtual
# environment, then run the unit tests and the bundle's smoke test against it.
#
#   packaging/lowest.sh            (packaging/test.sh runs it when ENGRAM_LOWEST=1)
#   ENGRAM_LOWEST_VENV=DIR         where the environment goes (default .venv-lowest)
#   ENGRAM_LOWEST_BUNDLE=0         skip the bundle's build and smoke test (a few minutes)
# The test tools the unit tests use come from the `test` extra, at their lowest too; uv is
# installed into the new environment by pip. The README says the last result.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ENGRAM_LOWEST_VENV:-$root/.venv-lowest}"
python="${PYTHON:-python3}"
say() { printf 'lowest: %s\n' "$*" >&2; }

rm -rf "$venv"
say "a new environment in $venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "uv>=0.4"
# What the unit tests import beyond the project, with the bounds the test extra declares.
mapfile -t tools < <("$venv/bin/python" - "$root/pyproject.toml" <<'EOF'
import sys, tomllib
wanted = {"pytest", "pytest-qt", "hypothesis", "httpx", "build", "psycopg", "shtab", "argparse-manpage"}
extra = tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["test"]
for line in extra:
    name = line.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip()
    if name in wanted:
        print(line)
EOF
)
bundle="${ENGRAM_LOWEST_BUNDLE:-1}"
extras=""
[ "$bundle" = 1 ] && extras="[bundle]"
say "installing the lowest declared versions: engram-inspector$extras ${tools[*]}"
"$venv/bin/uv" pip install --quiet --python "$venv/bin/python" --resolution lowest-direct \
  -e "$root$extras" "${tools[@]}"
"$venv/bin/uv" pip list --python "$venv/bin/python" > "$venv/versions.txt"
say "installed (also in $venv/versions.txt):"
grep -Ei '^(sqlalchemy|google-re2|alembic|pynacl|keyring|platformdirs|rich|pystemmer|pyside6-essentials|mcp|fastapi|fastapi-offline|uvicorn|pydantic|jsonschema|zxcvbn|filelock|pyinstaller) ' \
  "$venv/versions.txt" | sed 's/^/  /' >&2

cd "$root"
say "the unit tests"
QT_QPA_PLATFORM=offscreen "$venv/bin/python" -m pytest tests/unit -q "$@"

if [ "$bundle" = 1 ]; then
  say "the bundle, built from that environment, and its smoke test"
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  "$venv/bin/pyinstaller" --noconfirm --clean --log-level WARN \
    --distpath "$scratch/dist" --workpath "$scratch/work" "$root/packaging/engram.spec"
  env -u QT_QPA_PLATFORM bash "$root/packaging/smoke_bundle.sh" "$scratch/dist/engram/engram"
fi
say "passed with the lowest declared versions"
