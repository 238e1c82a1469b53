#!/usr/bin/env bash
# Data-parallel scaling over Gloo on this machine: `ember train` as 1, 2 and 4 processes
# of one intra-op thread each (`ember launch -n W`), the same micro-batch per rank (weak scaling:
# W x the tokens per step), rounds interleaved 1,2,4,1,2,4,... Per run: global tokens/s (median
# over the logged steps after warm-up), per-step communication wait that backward did not hide
# (comm_wait_s), the same all-reduce measured alone (comm_allreduce_s) and the overlap fraction
# 1 - wait / alone. Models: the tiny default (d 128, L 4) and a ~20M one (d 512, L 6).
# With 4 ranks on a 2-core machine the cores are oversubscribed: that row measures contention.
# Python's best alternative runs in the same rounds at 1 and 2 ranks: the same model under
# DistributedDataParallel over Gloo, fused AdamW, eager and torch.compile (bench/reference_ddp.py
# under torchrun; its parameter count is checked against ember's).
# Usage: bench/run_dist.sh [BUILD_DIR] [ROUNDS] [STEPS]
set -euo pipefail
build="$(cd "${1:-build}" && pwd)"
rounds="${2:-2}"
steps="${3:-30}"
ember="$build/tools/ember"
here="$(cd "$(dirname "$0")/.." && pwd)"
py="${EMBER_PYTHON:-$HOME/.cache/ember/venv/bin/python}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir -p data runs
"$py" "$here/tests/integration/make_synthetic.py" data 256 2000000 20000 >/dev/null
cat > base.yaml <<YAML
model: {vocab_size: 256, max_seq_len: 256, embedding: {kind: tied}, mixer: {kind: attention}}
data: {train: [data/train_*.bin], val: [data/val_*.bin]}
train: {steps: $steps, micro_batch: 8, seq_len: 256, threads: 1}
optim: {warmup_steps: 2}
eval: {every: 0, batches: 1}
checkpoint: {every: 0}
log: {dir: runs, name: x, every: 1}
YAML
declare -A shapes=([tiny]="128 4 4 384" [20m]="512 6 8 1536")  # d_model n_layers n_heads d_ff

ember_run() {  # model world round -> one JSON line
  local model=$1 w=$2 r=$3 run="runs/${1}_w${2}_r${3}" d l h f
  read -r d l h f <<<"${shapes[$model]}"
  "$ember" launch -n "$w" -- ember train -c base.yaml --set model.d_model=$d --set model.n_layers=$l \
    --set model.n_heads=$h --set model.mlp.d_ff=$f --run-dir "$run" >/dev/null 2>"$run.err" \
    || { cat "$run.err" >&2; exit 1; }
  "$py" - "$run" "$model" "$w" <<'PY'
import json, re, statistics, sys
run, model, w = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [r for r in map(json.loads, open(f"{run}/metrics.jsonl")) if r["kind"] == "train"][5:]
tok = statistics.median(r["tokens_per_s"] for r in rows)
wait = statistics.median(r["comm_wait_s"] for r in rows)
alone = rows[-1]["comm_allreduce_s"]
params = int(re.search(r"\| ([0-9]+) parameters \|", open(f"{run}.err").read()).group(1))
print(json.dumps({"impl": "ember", "model": model, "world": w, "params": params, "tokens_per_s": round(tok),
                  "comm_wait_ms": round(1e3 * wait, 2), "comm_allreduce_ms": round(1e3 * alone, 2),
                  "overlap": round(1 - wait / alone, 2) if alone > 0 else None}))
PY
}

python_run() {  # model world mode -> one JSON line
  local model=$1 w=$2 mode=$3 d l h f
  read -r d l h f <<<"${shapes[$model]}"
  # ember keeps freed memory in the heap (util/host_memory.h); glibc's tunables give Python the same.
  OMP_NUM_THREADS=1 GLIBC_TUNABLES="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=18446744073709551615" \
    "$py" -m torch.distributed.run --standalone --nproc-per-node "$w" \
    "$here/bench/reference_ddp.py" 256 "$d" "$l" "$h" "$f" 8 256 $((steps - 5)) "$mode" 2>"py.err" \
    | "$py" -c "import json,sys; r=json.loads(sys.stdin.read()); r['model']='$model'; print(json.dumps(r))" \
    || { cat py.err >&2; exit 1; }
}

for model in tiny 20m; do
  for r in $(seq 1 "$rounds"); do
    for w in 1 2 4; do ember_run "$model" "$w" "$r"; done
    for w in 1 2; do python_run "$model" "$w" eager; python_run "$model" "$w" compile; done
  done
done | tee results.jsonl
"$py" - <<'PY'
import json, statistics
rows = [json.loads(l) for l in open("results.jsonl")]
for model in ["tiny", "20m"]:
    params = {r["params"] for r in rows if r["model"] == model}
    assert len(params) == 1, f"{model}: ember and Python models differ in size: {params}"
    pick = lambda impl, w: [r for r in rows if r["model"] == model and r["impl"] == impl and r["world"] == w]
    base = [r["tokens_per_s"] for r in pick("ember", 1)]
    for w in [1, 2, 4]:
        sel = pick("ember", w)
        tok = [r["tokens_per_s"] for r in sel]
        speedup = [round(t / b, 2) for t, b in zip(tok, base)]
        print(f"{model:>4} ember world {w}: {statistics.median(tok):>8.0f} tok/s, x{statistics.median(speedup):.2f} "
              f"(rounds {speedup}), comm wait {statistics.median(r['comm_wait_ms'] for r in sel):.1f} ms/step, "
              f"all-reduce alone {statistics.median(r['comm_allreduce_ms'] for r in sel):.1f} ms, overlap "
              f"{[r['overlap'] for r in sel]}")
    for impl in ["python-ddp-eager", "python-ddp-compile"]:
        for w in [1, 2]:
            tok = [r["tokens_per_s"] for r in pick(impl, w)]
            ratio = [round(e["tokens_per_s"] / t, 2) for e, t in zip(pick("ember", w), tok)]
            print(f"{model:>4} {impl} world {w}: {statistics.median(tok):>8.0f} tok/s; ember / it "
                  f"x{statistics.median(ratio):.2f} (rounds {ratio})")
PY
