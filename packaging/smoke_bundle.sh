#!/usr/bin/env bash
# Smoke-test a built bundle: --version, `demo` into a temporary store, the inspector offscreen
# for a few seconds on that store, then `verify`. Touches nothing outside a temporary folder.
#   smoke_bundle.sh dist/engram/engram
set -euo pipefail
exe="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[ -x "$exe" ] || { echo "smoke test: no bundle at $1; build it with packaging/bundle.sh." >&2; exit 1; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# A private home, so neither the keyring, the settings nor the data of the user are touched.
export HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/config" XDG_DATA_HOME="$scratch/data"
export XDG_CACHE_HOME="$scratch/cache" XDG_RUNTIME_DIR="$scratch/run"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
unset DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY
export ENGRAM_SMOKE_PASSPHRASE=demo
store="$scratch/demo.engram"
engram=("$exe" --store "$store" --passphrase-env ENGRAM_SMOKE_PASSPHRASE)
fail() { echo "smoke test FAILED: $*" >&2; exit 1; }

version="$("$exe" --version)" || fail "--version exited non-zero"
[[ "$version" == "engram "* ]] || fail "--version printed '$version'"
echo "ok  --version: $version"

"${engram[@]}" demo > "$scratch/demo.out" 2>&1 || { cat "$scratch/demo.out" >&2; fail "demo"; }
grep -q "maya" "$scratch/demo.out" || { cat "$scratch/demo.out" >&2; fail "demo built no maya"; }
echo "ok  demo: $(head -1 "$scratch/demo.out")"

# The inspector, offscreen, unlocked on Maya's notes; it must still be running after 6 s.
status=0
QT_QPA_PLATFORM=offscreen timeout 6 "${engram[@]}" --actor staff:smoke desk "$store" \
  --person maya > "$scratch/desk.out" 2>&1 || status=$?
if [ "$status" != 124 ] || grep -Eq "Traceback|Error|could not (load|find)" "$scratch/desk.out"; then
  cat "$scratch/desk.out" >&2
  fail "desk exited with $status instead of running until stopped"
fi
# Unlocking records the store among the recent ones (QSettings), so this proves it opened.
grep -qsF "$store" "$XDG_CONFIG_HOME"/Engram/*.conf \
  || { cat "$scratch/desk.out" >&2; fail "desk ran but never unlocked the store"; }
echo "ok  desk: the inspector unlocked the store and ran offscreen for 6 s"

"${engram[@]}" verify > "$scratch/verify.out" 2>&1 || { cat "$scratch/verify.out" >&2; fail "verify"; }
grep -q "^Store intact" "$scratch/verify.out" || { cat "$scratch/verify.out" >&2; fail "verify"; }
echo "ok  verify: $(head -1 "$scratch/verify.out")"
echo "smoke test passed"
