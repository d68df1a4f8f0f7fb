#!/usr/bin/env bash
# Everything Engram needs on a fresh Debian/Ubuntu machine with Python 3.11+:
# the few system libraries Qt needs (installed only when missing), a virtual environment
# in .venv, and the project with its test extras. Safe to run again; quick when done.
#   ENGRAM_WITH_XVFB=1  also installs what screenshots under Xvfb need.
# PostgreSQL (server) is installed for the integration tests; Engram itself defaults to SQLite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ENGRAM_VENV:-$root/.venv}"
python="${PYTHON:-python3}"

say() { printf 'engram setup: %s\n' "$*" >&2; }

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  say "Engram needs Python 3.11 or newer; $python is $("$python" --version 2>&1)."
  exit 1
fi

packages=(libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 libglib2.0-0)
# The PostgreSQL server the integration tests start a throwaway cluster of.
packages+=(postgresql)
if [ "${ENGRAM_WITH_XVFB:-0}" = 1 ]; then
  packages+=(xvfb xauth libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-image0
             libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 fonts-dejavu-core)
fi
if ! "$python" -c 'import ensurepip' >/dev/null 2>&1; then
  packages+=(python3-venv)
fi
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$package")
  done
fi
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo="none"; fi
  if [ "$sudo" = none ]; then
    say "please install these system packages first: ${missing[*]}"
  else
    say "installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

if [ ! -x "$venv/bin/python" ]; then
  say "creating the virtual environment in $venv"
  "$python" -m venv "$venv"
fi
stamp="$venv/.engram-installed"
want=$(cat "$root/pyproject.toml" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "installing Engram and its test tools into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$root[test]"
  echo "$want" > "$stamp"
fi
