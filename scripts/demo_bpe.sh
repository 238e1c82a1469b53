#!/usr/bin/env bash
# The BPE path end to end: train an 8k byte-level BPE on the default corpus (python3.11-doc +
# linux-doc-6.1), prepare the corpus and the two out-of-distribution sets (King James Bible,
# Debian Administrator's Handbook), train the tiny model, report validation perplexity and both
# out-of-distribution perplexities. Extra arguments go to `ember train` (e.g. --set train.steps=100).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ "${EMBER_SKIP_SETUP:-0}" = 1 ] || bash "$here/scripts/setup.sh"
ember="${EMBER_BUILD:-$here/build}/tools/ember"
cd "$here"
tok=data/tok/default8k.tiktoken
[ -f "$tok" ] || "$ember" tokenizer train --corpus default --vocab-size 8192 --out "$tok"
[ -f data/default_bpe/manifest.json ] || "$ember" prepare corpus default --tokenizer "$tok" --out data/default_bpe
for ood in kjv handbook; do
  [ -f "data/$ood/manifest.json" ] || "$ember" prepare corpus "$ood" --tokenizer "$tok" --out "data/$ood"
done
run="runs/tiny_bpe"
if [ -d "$run/checkpoints" ]; then
  "$ember" train --resume --run-dir "$run" "$@"
else
  "$ember" train -c configs/tiny.yaml -c configs/tiny_bpe.yaml "$@"
fi
echo "== validation (default corpus)"
"$ember" eval "$run" --batches 64
for ood in kjv handbook; do
  echo "== out of distribution: $ood"
  "$ember" eval "$run" --data "data/$ood/val_*.bin" --batches 64
done
echo "run directory: $here/$run"
