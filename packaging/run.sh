#!/usr/bin/env bash
# Open Engram on the demo store, building it on first run.
# The demo store is public sample data, so its passphrase is simply "demo".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/packaging/bootstrap.sh"
venv="${ENGRAM_VENV:-$root/.venv}"
store="${ENGRAM_DEMO_STORE:-${XDG_DATA_HOME:-$HOME/.local/share}/engram/demo.engram}"
export ENGRAM_DEMO_PASSPHRASE="${ENGRAM_DEMO_PASSPHRASE:-demo}"
engram=("$venv/bin/engram" --store "$store" --passphrase-env ENGRAM_DEMO_PASSPHRASE)
if [ ! -f "$store" ]; then
  "${engram[@]}" demo
fi
echo
echo "People in $store:"
"${engram[@]}" persons
echo
echo "Maya's active notes:"
"${engram[@]}" notes list --person maya
echo
echo "Try: ${engram[*]} notes list --person maya --all"
echo "     ${engram[*]} conversations list --person maya"
echo "     ${engram[*]} verify"
