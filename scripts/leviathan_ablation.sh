#!/usr/bin/env bash
# The Leviathan ablation at CPU size: the six input-embedding kinds (tied, untied, albert,
# flat_mlp, factored_mlp, lev) with the same body on the embedded default corpus, one after the
# other, then one table (markdown on stdout, JSON in $out/summary.json) of parameters, full
# validation loss / perplexity and training throughput. Resumable: a finished run is kept, an
# interrupted one resumes from its last checkpoint. About a minute per kind on 2 cores.
# Usage: scripts/leviathan_ablation.sh [--bpe] [--out DIR] [--kinds "lev untied ..."] [--data DIR]
#                                      [--no-setup] [-- extra train args]
#   --bpe        the 8k BPE vocabulary (configs/leviathan/cpu_bpe.yaml; tokenizer and data prepared
#                as scripts/demo_bpe.sh does), out runs/leviathan_cpu_bpe
#   --data DIR   shards DIR/train_*.bin and DIR/val_*.bin instead of the default corpus (V <= 256)
#   --no-setup   skip scripts/setup.sh (ember already built in $EMBER_BUILD, default build/)
# e.g.   scripts/leviathan_ablation.sh --out runs/lev_2k -- --set train.steps=2000
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="runs/leviathan_cpu"
kinds="tied untied albert flat_mlp factored_mlp lev"
bpe=0
data=""
setup=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --kinds) kinds="$2"; shift 2 ;;
    --bpe) bpe=1; shift ;;
    --data) data="$2"; shift 2 ;;
    --no-setup) setup=0; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "leviathan_ablation: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ "$bpe" = 0 ] || [ "$out" != "runs/leviathan_cpu" ] || out="runs/leviathan_cpu_bpe"
# Paths given on the command line are relative to where the script was called.
[ -z "$data" ] || data="$(realpath -m "$data")"
case "$out" in runs/leviathan_cpu|runs/leviathan_cpu_bpe) ;; *) out="$(realpath -m "$out")" ;; esac
if [ "$setup" = 1 ]; then bash "$here/scripts/setup.sh"; fi
ember="${EMBER_BUILD:-$here/build}/tools/ember"
py="${EMBER_PYTHON:-${EMBER_VENV:-$HOME/.cache/ember/venv}/bin/python}"
cd "$here"
for kind in $kinds; do
  [ -f "configs/leviathan/$kind.yaml" ] || { echo "leviathan_ablation: no configs/leviathan/$kind.yaml" >&2; exit 2; }
done
data_args=()
base=(-c configs/leviathan/cpu.yaml)
if [ "$bpe" = 1 ]; then
  base+=(-c configs/leviathan/cpu_bpe.yaml)
  tok=data/tok/default8k.tiktoken
  [ -f "$tok" ] || "$ember" tokenizer train --corpus default --vocab-size 8192 --out "$tok"
  [ -f data/default_bpe/manifest.json ] || "$ember" prepare corpus default --tokenizer "$tok" --out data/default_bpe
fi
if [ -n "$data" ]; then
  compgen -G "$data/train_*.bin" >/dev/null || { echo "leviathan_ablation: no $data/train_*.bin" >&2; exit 2; }
  data_args=(--set "data.train=[$data/train_*.bin]" --set "data.val=[$data/val_*.bin]")
elif [ "$bpe" = 0 ]; then
  [ -f data/pydoc/manifest.json ] || "$ember" prepare bytes /usr/share/doc/python3.11/html/_sources --out data/pydoc
fi

for kind in $kinds; do
  run="$out/$kind"
  if [ -f "$run/eval.json" ]; then
    echo "== $kind: done ($run/eval.json)"
    continue
  fi
  echo "== $kind"
  if [ -d "$run/checkpoints" ]; then
    "$ember" train --resume --run-dir "$run" "$@"
  else
    "$ember" train "${base[@]}" -c "configs/leviathan/$kind.yaml" --set "log.dir=$out" \
      ${data_args[@]+"${data_args[@]}"} "$@"
  fi
  "$ember" inspect "$run/config.yaml" --json >"$run/inspect.json"
  "$ember" eval "$run" --batches 0 --json >"$run/eval.json.tmp"
  mv "$run/eval.json.tmp" "$run/eval.json"
done

"$py" - "$out" $kinds <<'PY'
import json, os, statistics, sys
out, kinds = sys.argv[1], sys.argv[2:]
rows = []
for kind in kinds:
    run = os.path.join(out, kind)
    ev = json.load(open(os.path.join(run, "eval.json")))
    shape = json.load(open(os.path.join(run, "inspect.json")))
    train = [json.loads(l) for l in open(os.path.join(run, "metrics.jsonl")) if '"kind":"train"' in l]
    tok_s = statistics.median(r["tokens_per_s"] for r in train[len(train) // 2:])
    rows.append({"kind": kind, "embedding_params": shape["embedding_params"], "total_params": shape["total_params"],
                 "val_loss": ev["loss"], "val_ppl": ev["perplexity"], "val_tokens": ev["tokens"],
                 "steps": ev["step"], "train_tokens": train[-1]["tokens"], "tokens_per_s": tok_s, "run": run})
json.dump(rows, open(os.path.join(out, "summary.json"), "w"), indent=2)
best = min(r["val_loss"] for r in rows)
print(f"\n| kind | input-side params | total params | steps | val loss | val ppl | vs best | train tokens/s |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['kind']} | {r['embedding_params']:,} | {r['total_params']:,} | {r['steps']} | {r['val_loss']:.4f} "
          f"| {r['val_ppl']:.3f} | {r['val_loss'] - best:+.4f} | {r['tokens_per_s']:.0f} |")
print(f"\nvalidation: {rows[0]['val_tokens']:,} tokens per model; summary: {os.path.join(out, 'summary.json')}")
PY
