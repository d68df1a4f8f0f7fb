#!/usr/bin/env bash
# Set up Engram on a fresh Debian/Ubuntu machine with Python 3.11+: the system packages it
# needs (installed only when missing), a virtual environment in .venv, and the project.
# Safe to run again; quick when done.
#
#   bootstrap.sh [--for run|test|bundle]     (default: test, what developers want)
#     run     Qt's system libraries; the project alone           (packaging/run.sh)
#     test    also the test-only system packages and test tools  (packaging/test.sh, CI)
#     bundle  also PyInstaller, for packaging/bundle.sh
#   ENGRAM_WITH_XVFB=1  (test) also what screenshots under Xvfb need (and QtPdf, from
#                       PySide6-Addons, for the access report's first page).
# Engram itself defaults to SQLite: PostgreSQL is installed for the tests only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ENGRAM_VENV:-$root/.venv}"
python="${PYTHON:-python3}"
purpose=test
while [ $# -gt 0 ]; do
  case "$1" in
    --for) purpose="${2:-}"; shift 2 ;;
    --for=*) purpose="${1#--for=}"; shift ;;
    *) printf 'engram setup: unknown option %s (use --for run|test|bundle).\n' "$1" >&2; exit 2 ;;
  esac
done

say() { printf 'engram setup: %s\n' "$*" >&2; }

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  say "Engram needs Python 3.11 or newer; $python is $("$python" --version 2>&1)."
  exit 1
fi

# --- system packages -------------------------------------------------------------------
# Running: the libraries Qt's xcb/Wayland platforms load. The X11 window (Qt 6.5 and later)
# needs the xcb libraries below: `ldd` on PySide6's plugins/platforms/libqxcb.so,
# lib/libQt6XcbQpa.so.6 and plugins/xcbglintegrations/*.so names each one
# (tests/integration/test_issue20_item9_no_display.py checks none is missing).
run_packages=(libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 libglib2.0-0
              libx11-6 libx11-xcb1 libxcb1 libxcb-cursor0 libxcb-glx0 libxcb-icccm4
              libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render0 libxcb-render-util0
              libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1
              libxkbcommon-x11-0 libwayland-client0 libwayland-cursor0 libwayland-egl1
              fonts-dejavu-core)
# Testing only: the PostgreSQL server the integration tests start a throwaway cluster of,
# the validators the desktop-entry and AppStream tests run, and poppler's pdftotext and
# pdftoppm, which read back the access report the inspector writes.
test_packages=(postgresql desktop-file-utils appstream poppler-utils)
# ... and a real Secret Service (gnome-keyring) on a private D-Bus session bus, so the
# keyring path is tested for real (tests/secret_service.py, test_real_keyring.py).
test_packages+=(gnome-keyring dbus-daemon dbus-bin)
# Screenshots only (ENGRAM_WITH_XVFB=1): a virtual display (the xcb libraries are run's).
xvfb_packages=(xvfb xauth)

case "$purpose" in
  run) packages=("${run_packages[@]}"); extra="" ;;
  bundle) packages=("${run_packages[@]}"); extra="bundle" ;;
  test)
    packages=("${run_packages[@]}" "${test_packages[@]}"); extra="test"
    if [ "${ENGRAM_WITH_XVFB:-0}" = 1 ]; then
      packages+=("${xvfb_packages[@]}"); extra="test,screenshots"
    fi
    ;;
  *) say "--for takes run, test or bundle, not '$purpose'."; exit 2 ;;
esac
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

# --- the virtual environment and the project ------------------------------------------
if [ ! -x "$venv/bin/python" ]; then
  say "creating the virtual environment in $venv"
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip -q --disable-pip-version-check)
# The distribution was called "engram" before; its files (the `engram` script among them)
# would clash with engram-inspector's, so it goes first and the project is installed again.
stamp="$venv/.engram-installed"
if compgen -G "$venv/lib/python3*/site-packages/engram-[0-9]*.dist-info" >/dev/null; then
  say "removing the old 'engram' distribution from $venv"
  "${pip[@]}" uninstall -y engram
  rm -f "$stamp"
fi
# Its metadata, left in app/ by the editable install, would still list it on sys.path.
rm -rf "$root/app/engram.egg-info"
# The stamp holds pyproject.toml's hash and the extras installed with it: a change to
# pyproject.toml (a new dependency, a rename) installs again, keeping the extras there were.
want=$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)
have=""; extras=""
if [ -f "$stamp" ]; then
  have=$(sed -n 1p "$stamp"); extras=$(sed -n 2p "$stamp")
fi
[ "$have" = "$want" ] || have=""
# ... and the project must still be there (a stray `pip uninstall` leaves the stamp behind).
compgen -G "$venv/lib/python3*/site-packages/engram_inspector-*.dist-info" >/dev/null || have=""
for wanted in ${extra//,/ }; do
  if [[ ",$extras," != *",$wanted,"* ]]; then
    extras="${extras:+$extras,}$wanted"; have=""
  fi
done
if [ -z "$have" ]; then
  say "installing Engram${extras:+ with [$extras]} into $venv"
  "${pip[@]}" install --upgrade pip
  "${pip[@]}" install -e "$root${extras:+[$extras]}"
  printf '%s\n%s\n' "$want" "$extras" > "$stamp"
fi
