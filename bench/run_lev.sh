#!/usr/bin/env bash
# LEV benchmarks side by side: (1) the generator with the fused CPU kernels vs the ATen reference
# (time and peak memory, each in its own process) for N = 8192 tokens, V = 50,257, D = 768;
# (2) a whole training step of a LEV model vs the untied model with the same body, interleaved.
# Usage: [ROUNDS=8] [PRECISION=fp32|bf16] bench/run_lev.sh [build_dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
py="${EMBER_PYTHON:-${EMBER_VENV:-$HOME/.cache/ember/venv}/bin/python}"
f=$("$build/bench/ember_lev_bench" fused 8192 50257 768 3)
r=$("$build/bench/ember_lev_bench" reference 8192 50257 768 3)
"$py" - "$f" "$r" <<'PY'
import json, sys
f, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print("| generator fwd+bwd, N=8192 (unique %d), V=50257, D=768 | s/iter | peak extra MB |" % f["unique"])
print("|---|---|---|")
for x in (f, r):
    print(f"| {x['impl']} | {x['s_per_iter']:.3f} | {x['peak_extra_mb']:.0f} |")
print(f"| fused advantage | {r['s_per_iter']/f['s_per_iter']:.1f}x faster | {r['peak_extra_mb']/max(f['peak_extra_mb'],1):.1f}x less |")
PY
# Training step: D=512, L=8, V=32000, B x T = 8 x 256, d_ff = 1536 (SwiGLU 8d/3 rounded); untied
# and lev interleaved in one process (ABBA rounds), median of the per-round ratios.
step=$("$build/bench/ember_embedding_step_bench" 32000 512 8 8 1536 8 256 "${ROUNDS:-8}" "${PRECISION:-fp32}" untied lev)
"$py" - "$step" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
print()
print("| training step, D=512 L=8 V=32000 B x T=8 x 256 (%d unique ids), %d rounds, %d threads | params | median s/step | vs untied (median of rounds) | vs untied (range over rounds) |" % (r["unique_ids"], r["rounds"], r["threads"]))
print("|---|---|---|---|---|")
for k in r["kinds"]:
    lo, hi = 100 * (k["min_relative_to_first"] - 1), 100 * (k["max_relative_to_first"] - 1)
    print(f"| {k['kind']} | {k['params']/1e6:.1f}M | {k['median_s_per_step']:.3f} | {100*(k['median_relative_to_first']-1):+.1f}% | {lo:+.1f}% to {hi:+.1f}% |")
PY
