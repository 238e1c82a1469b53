#!/usr/bin/env bash
# Side-by-side training throughput: ember against Python at its best on the identical model, same
# torch, same machine: eager with fused AdamW, and torch.compile (bench/reference_train.py). Each
# round runs the three once, in A B C order on odd rounds and C B A on even ones, so that drifts in
# machine load hit every contender alike; prints a Markdown table of medians, ranges and the
# per-round ratios. Usage: bench/run_throughput.sh [build_dir] [steps] [precision] [rounds]
#   EMBER_BASELINE_BUILD=DIR  also runs DIR's ember_train_bench (another commit's build) in the same
#                             rounds, with ember / baseline per round: a change's cost, side by side
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
steps="${2:-5}"
prec="${3:-fp32}"
rounds="${4:-2}"
py="${EMBER_PYTHON:-${EMBER_VENV:-$HOME/.cache/ember/venv}/bin/python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
shape_args() {
  "$py" -c "import json,sys; s=json.load(open('$here/bench/shapes.json'))['$1']; print(s['vocab_size'], s['d_model'], s['n_layers'], s['n_heads'], s['d_ff'], s['batch'], s['seq_len'])"
}
# ember keeps freed memory in the heap (util/host_memory.h: no mmap for large blocks, no trimming);
# glibc's tunables give the Python contenders the same.
python_heap="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=18446744073709551615"
run_one() {  # contender shape_args... steps
  case "$1" in
    ember) "$build/bench/ember_train_bench" "${@:2}" "$prec" ;;
    baseline) "$EMBER_BASELINE_BUILD/bench/ember_train_bench" "${@:2}" "$prec" ;;
    eager) GLIBC_TUNABLES="$python_heap" "$py" "$here/bench/reference_train.py" "${@:2}" "$prec" eager ;;
    compile) GLIBC_TUNABLES="$python_heap" "$py" "$here/bench/reference_train.py" "${@:2}" "$prec" compile 2>"$work/compile.err" ||
      { cat "$work/compile.err" >&2; return 1; } ;;
  esac
}
contenders=(ember eager compile)
[ -n "${EMBER_BASELINE_BUILD:-}" ] && contenders=(ember baseline eager compile)
echo "| shape | precision | ember tok/s | python eager (fused AdamW) | python torch.compile | ember / eager (rounds) | ember / compile (rounds) |$([ -n "${EMBER_BASELINE_BUILD:-}" ] && echo " baseline tok/s | ember / baseline (rounds) |")"
echo "|---|---|---|---|---|---|---|$([ -n "${EMBER_BASELINE_BUILD:-}" ] && echo "---|---|")"
for shape in gpt2_small tiny; do
  read -r -a a <<<"$(shape_args $shape)"
  n=$steps; [ "$shape" = tiny ] && n=$((steps * 10))
  : >"$work/$shape.jsonl"
  for r in $(seq 1 "$rounds"); do
    order=("${contenders[@]}"); [ $((r % 2)) = 0 ] && order=($(printf '%s\n' "${contenders[@]}" | tac))
    for c in "${order[@]}"; do
      echo "{\"round\": $r, \"contender\": \"$c\", \"result\": $(run_one "$c" "${a[@]}" "$n")}" >>"$work/$shape.jsonl"
    done
  done
  "$py" - "$shape" "$prec" "$work/$shape.jsonl" <<'PY'
import json, statistics, sys
shape, prec, path = sys.argv[1], sys.argv[2], sys.argv[3]
recs = [json.loads(l) for l in open(path)]
params = {r["result"]["params"] for r in recs}
assert len(params) == 1, f"the contenders' models differ in size: {params}"
tok = {c: {r["round"]: r["result"]["tokens_per_s"] for r in recs if r["contender"] == c}
       for c in ("ember", "baseline", "eager", "compile")}
def cell(c):
    v = list(tok[c].values())
    return f"{statistics.median(v):.0f} ({min(v):.0f}-{max(v):.0f})"
def ratio(other):
    per = [tok["ember"][r] / tok[other][r] for r in sorted(tok["ember"])]
    return f"{statistics.median(per):.2f}x ({', '.join(f'{x:.2f}' for x in per)})"
extra = f" {cell('baseline')} | {ratio('baseline')} |" if tok["baseline"] else ""
print(f"| {shape} ({params.pop() / 1e6:.1f}M) | {prec} | {cell('ember')} | {cell('eager')} | {cell('compile')} | "
      f"{ratio('eager')} | {ratio('compile')} |{extra}")
PY
done
