#!/usr/bin/env bash
# LEV benchmarks side by side: (1) the generator with the fused CPU kernels vs the ATen reference
# (time and peak memory, each in its own process) for N = 8192 tokens, V = 50,257, D = 768;
# (2) a whole training step of a LEV model vs the untied model with the same body.
# Usage: bench/run_lev.sh [build_dir]
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
# Training step: D=512, L=8, V=32000, B x T = 8 x 256, d_ff = 1536 (SwiGLU 8d/3 rounded)
args=(32000 512 8 8 1536 8 256 3 fp32)
u=$("$build/bench/ember_train_bench" "${args[@]}" untied)
l=$("$build/bench/ember_train_bench" "${args[@]}" lev)
"$py" - "$u" "$l" <<'PY'
import json, sys
u, l = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print()
print("| training step, D=512 L=8 V=32000 B x T=8 x 256 | params | s/step | tokens/s |")
print("|---|---|---|---|")
for name, x in (("untied", u), ("lev", l)):
    print(f"| {name} | {x['params']/1e6:.1f}M | {x['s_per_step']:.3f} | {x['tokens_per_s']:.0f} |")
print(f"| lev step cost vs untied | | {100*(l['s_per_step']/u['s_per_step']-1):+.1f}% | |")
PY
