#!/usr/bin/env bash
# The loss head's time above its own GEMMs, fused pass against ATen pass (kernels.loss_head = aten), fp32
# and bf16 autocast, each run in its own process, rounds alternating the three (ABC ABC ...):
# `matmuls` times the head's three GEMMs alone (logits, input gradient, weight gradient), so the
# overhead is a head's time minus that; and within one profiled iteration of each head, its time
# outside ATen's mm (outside_matmul_s), which the GEMMs' spread between runs does not blur. Prints
# each run's JSON and a summary line per precision: medians, the per-round ratios, peak memory.
# Usage: bench/run_loss_head.sh [BUILD_DIR] [ROUNDS] [N D V]
set -euo pipefail
build="${1:-build}"
rounds="${2:-3}"
shape="${3:-4096 768 50257}"
bin="$build/bench/ember_loss_bench"
[ -x "$bin" ] || { echo "run_loss_head: $bin not built" >&2; exit 2; }
out=$(mktemp)
for precision in fp32 bf16; do
  for _ in $(seq 1 "$rounds"); do
    "$bin" matmuls $shape 2 "$precision" | tee -a "$out"
    "$bin" chunked $shape 2 "$precision" | tee -a "$out"
    "$bin" chunked $shape 2 "$precision" aten | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for precision in ("fp32", "bf16"):
    pick = lambda impl, fused, f: [r[f] for r in rows if r["precision"] == precision and r["impl"] == impl
                                   and (impl == "matmuls" or r["fused"] == fused)]
    mm = pick("matmuls", None, "s_per_iter")
    fused, aten = pick("chunked", 1, "s_per_iter"), pick("chunked", 0, "s_per_iter")
    over_f = [f - m for f, m in zip(fused, mm)]
    over_a = [a - m for a, m in zip(aten, mm)]
    ratio = [a / f if f > 0 else float("inf") for a, f in zip(over_a, over_f)]
    out_f, out_a = pick("chunked", 1, "outside_matmul_s"), pick("chunked", 0, "outside_matmul_s")
    out_ratio = [a / f for a, f in zip(out_a, out_f)]
    r0 = rows[0]
    print(f"N={r0['N']} D={r0['D']} V={r0['V']} {precision}: matmuls {statistics.median(mm):.3f} s; "
          f"fused {statistics.median(fused):.3f} s (+{statistics.median(over_f):.3f}), "
          f"ATen pass {statistics.median(aten):.3f} s (+{statistics.median(over_a):.3f}); "
          f"overhead / {statistics.median(ratio):.2f} (rounds {[round(x, 2) for x in ratio]}); "
          f"outside mm (profiled): fused {statistics.median(out_f):.3f} s, ATen pass {statistics.median(out_a):.3f} s, "
          f"/ {statistics.median(out_ratio):.2f} (rounds {[round(x, 2) for x in out_ratio]}); "
          f"peak MB fused {max(pick('chunked', 1, 'peak_extra_mb')):.0f}, ATen {max(pick('chunked', 0, 'peak_extra_mb')):.0f}")
PY
rm -f "$out"
