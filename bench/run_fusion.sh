#!/usr/bin/env bash
# One fused op against its ATen path: OP=fused against OP=aten (a key of the kernels section) for a
# whole training step of ember_train_bench, each run its own process, rounds alternating (ABAB), fp32
# and bf16 autocast. OP: projections (model/fused_projections.h: q, k, v in one GEMM, gate and up in
# one; the default), norm (model/norm.h: RMSNorm with its residual add, one pass each way), swiglu
# (kernels/swiglu.h: the SwiGLU gate as one kernel each way), loss_head, rope or lev. Prints a
# Markdown row per shape and precision: median tokens/s of each, and the per-round ratio.
# Usage: bench/run_fusion.sh [BUILD_DIR] [ROUNDS] [STEPS] [OP]
set -euo pipefail
build="${1:-build}"
rounds="${2:-5}"
steps="${3:-6}"
op="${4:-projections}"
bin="$build/bench/ember_train_bench"
[ -x "$bin" ] || { echo "run_fusion: $bin not built" >&2; exit 2; }
shapes=("tiny 256 128 4 4 384 8 256" "d512 256 512 4 8 1376 4 256")  # name V D L H D_FF B T
out=$(mktemp)
for shape in "${shapes[@]}"; do
  set -- $shape
  name=$1
  shift
  for precision in fp32 bf16; do
    for _ in $(seq 1 "$rounds"); do
      for fused in 1 0; do
        path=aten; [ "$fused" = 1 ] && path=fused
        r=$("$bin" "$@" "$steps" "$precision" tied "$op=$path" 2>/dev/null | tail -1)
        echo "{\"shape\": \"$name\", \"fused\": $fused, \"run\": $r}" | tee -a "$out" >&2
      done
    done
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| shape | params | precision | fused tok/s | unfused tok/s | fused / unfused (rounds) |")
print("|---|---|---|---|---|---|")
for shape in dict.fromkeys(r["shape"] for r in rows):
    for precision in ("fp32", "bf16"):
        pick = lambda f: [r["run"]["tokens_per_s"] for r in rows
                          if r["shape"] == shape and r["fused"] == f and r["run"]["precision"] == precision]
        fused, separate = pick(1), pick(0)
        ratio = [a / b for a, b in zip(fused, separate)]
        params = next(r["run"]["params"] for r in rows if r["shape"] == shape)
        print(f"| {shape} | {params / 1e6:.1f}M | {precision} | {statistics.median(fused):.0f} ({min(fused):.0f}-{max(fused):.0f}) "
              f"| {statistics.median(separate):.0f} ({min(separate):.0f}-{max(separate):.0f}) "
              f"| {statistics.median(ratio):.3f}x ({', '.join(f'{x:.3f}' for x in ratio)}) |")
PY
