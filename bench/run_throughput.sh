#!/usr/bin/env bash
# Side-by-side training throughput: ember vs the Python eager reference of the identical model,
# same torch version, same machine, interleaved in one run. Prints a Markdown table with ratios.
# Usage: bench/run_throughput.sh [build_dir] [steps] [precision]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
steps="${2:-5}"
prec="${3:-fp32}"
py="${EMBER_PYTHON:-${EMBER_VENV:-$HOME/.cache/ember/venv}/bin/python}"
shape_args() {
  "$py" -c "import json,sys; s=json.load(open('$here/bench/shapes.json'))['$1']; print(s['vocab_size'], s['d_model'], s['n_layers'], s['n_heads'], s['d_ff'], s['batch'], s['seq_len'])"
}
echo "| shape | precision | ember tok/s | python eager tok/s | ember / python | ember MFU | matmul peak GFLOP/s |"
echo "|---|---|---|---|---|---|---|"
for shape in gpt2_small tiny; do
  read -r -a a <<<"$(shape_args $shape)"
  n=$steps; [ "$shape" = tiny ] && n=$((steps * 10))
  e=$("$build/bench/ember_train_bench" "${a[@]}" "$n" "$prec")
  p=$("$py" "$here/bench/reference_train.py" "${a[@]}" "$n" "$prec")
  "$py" - "$shape" "$prec" "$e" "$p" <<'PY'
import json, sys
shape, prec, e, p = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
assert e["params"] == p["params"], (e["params"], p["params"])
print(f"| {shape} ({e['params']/1e6:.1f}M) | {prec} | {e['tokens_per_s']:.0f} | {p['tokens_per_s']:.0f} | "
      f"{e['tokens_per_s']/p['tokens_per_s']:.2f}x | {100*e['mfu']:.1f}% | {e['peak_gflops']:.0f} |")
PY
done
