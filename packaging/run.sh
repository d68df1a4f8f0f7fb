#!/usr/bin/env bash
# Open the Engram inspector on the demo store, building the store on first run.
# Without a display, `engram desk` exits 4 (its own code): it prints the full command that opens
# the window where a display is, and what the command line offers here.
# The demo store is public sample data, so its passphrase is simply "demo".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/packaging/bootstrap.sh" --for run
venv="${ENGRAM_VENV:-$root/.venv}"
store="${ENGRAM_DEMO_STORE:-${XDG_DATA_HOME:-$HOME/.local/share}/engram/demo.engram}"
export ENGRAM_DEMO_PASSPHRASE="${ENGRAM_DEMO_PASSPHRASE:-demo}"
engram=("$venv/bin/engram" --store "$store" --passphrase-env ENGRAM_DEMO_PASSPHRASE)
if [ ! -f "$store" ]; then
  "${engram[@]}" demo
fi
status=0
"${engram[@]}" --actor staff:demo desk "$store" --person maya || status=$?
if [ "$status" = 4 ]; then
  # No display: the inspector said so and what to run; show what the store holds meanwhile.
  echo
  echo "People in $store:"
  "${engram[@]}" persons
  echo
  echo "Maya's active notes:"
  "${engram[@]}" notes list --person maya
  status=0
fi
exit "$status"
