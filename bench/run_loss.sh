#!/usr/bin/env bash
# The loss head side by side: ember's chunked linear cross-entropy vs the materialised
# logits + cross_entropy, forward + backward, each in its own process so that peak memory is its
# own, alternating ABAB over ROUNDS. Prints one JSON line per run and a summary per shape.
# Usage: bench/run_loss.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build="${1:-build}"
rounds="${2:-2}"
bin="$build/bench/ember_loss_bench"
[ -x "$bin" ] || { echo "run_loss: $bin not built" >&2; exit 2; }
out=$(mktemp)
for shape in "4096 768 50257" "2048 512 200376" "8192 256 200376"; do
  for _ in $(seq 1 "$rounds"); do
    for impl in materialised chunked; do
      "$bin" "$impl" $shape 2 fp32 | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for key in sorted({(r["N"], r["D"], r["V"]) for r in rows}):
    pick = lambda impl, f: [r[f] for r in rows if (r["N"], r["D"], r["V"]) == key and r["impl"] == impl]
    m_s, c_s = pick("materialised", "s_per_iter"), pick("chunked", "s_per_iter")
    m_mb, c_mb = pick("materialised", "peak_extra_mb"), pick("chunked", "peak_extra_mb")
    print(f"N={key[0]} D={key[1]} V={key[2]}: materialised {statistics.median(m_s):.3f} s, {max(m_mb):.0f} MB; "
          f"chunked {statistics.median(c_s):.3f} s, {max(c_mb):.0f} MB; speed x{statistics.median(m_s) / statistics.median(c_s):.2f} "
          f"(rounds {[round(a / b, 2) for a, b in zip(m_s, c_s)]}), memory /{max(m_mb) / max(c_mb):.1f}")
PY
rm -f "$out"
