#!/usr/bin/env bash
# ember's main job on the embedded default: set-up, prepare the default corpus (Debian's Python
# 3.11 documentation, byte-level tokens), train the tiny model, evaluate it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EMBER_TARGETS="${EMBER_TARGETS:-ember}" bash "$here/scripts/setup.sh"  # only what the demo runs
ember="${EMBER_BUILD:-$here/build}/tools/ember"
cd "$here"
corpus=/usr/share/doc/python3.11/html/_sources
if [ ! -f data/pydoc/manifest.json ]; then
  "$ember" prepare bytes "$corpus" --out data/pydoc
fi
run="runs/tiny"
if [ -d "$run/checkpoints" ]; then
  "$ember" train --resume --run-dir "$run" "$@"
else
  "$ember" train -c configs/tiny.yaml "$@"
fi
"$ember" eval "$run" --batches 0
echo "run directory: $here/$run (config.yaml, metrics.jsonl, checkpoints/)"
