#!/usr/bin/env bash
# The token mixers side by side: (1) a training step of each mixer on the tiny body
# (configs/tiny.yaml: d 128, 4 layers, 4 heads, V 256) at B x T = 4 x 512, interleaved ABBA in one
# process: tokens/s, time relative to attention, and the resident memory one step adds per token;
# (2) the Titans memory scan, chunk-parallel against the token-by-token loop, at T = 1024, C = 16.
# Usage: bench/run_mixers.sh [build_dir]      (ROUNDS=N for more rounds; default 6)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
py="${EMBER_PYTHON:-${EMBER_VENV:-$HOME/.cache/ember/venv}/bin/python}"
cd "$here"
step=$("$build/bench/ember_mixer_step_bench" configs/tiny.yaml 4 512 "${ROUNDS:-6}" \
  attention=configs/mixers/attention.yaml gated_attention=configs/mixers/gated_attention.yaml \
  titans=configs/mixers/titans.yaml titans_mag=configs/mixers/titans_mag.yaml \
  hope_attention=configs/mixers/hope_attention.yaml hope_attention_static=bench/hope_attention_static.yaml)
scan=$("$build/bench/ember_titans_scan_bench" 1 4 1024 32 4 16 "${ROUNDS:-6}")
"$py" - "$step" "$scan" <<'PY'
import json, sys
r, s = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"| mixer (tiny body, B x T = {r['batch']} x {r['seq_len']}, {r['rounds']} rounds, {r['threads']} threads) | params | tokens/s | step time vs attention (median of rounds) | step peak KB/token |")
print("|---|---|---|---|---|")
for m in r["mixers"]:
    print(f"| {m['name']} | {m['params']:,} | {m['tokens_per_s']:.0f} | {m['median_relative_to_first']:.2f}x | {m['step_peak_kb_per_token']:.1f} |")
print()
print(f"| Titans memory scan, B={s['B']} H={s['H']} T={s['T']} d_head={s['d_head']} hidden={s['hidden']} C={s['chunk']} | s |")
print("|---|---|")
print(f"| chunk-parallel (memory_scan) | {s['chunked_s']:.4f} |")
print(f"| token-by-token loop (memory_scan_reference) | {s['loop_s']:.4f} |")
print(f"| speed-up, median (range) over {s['rounds']} rounds | {s['speedup_median']:.1f}x ({s['speedup_min']:.1f}-{s['speedup_max']:.1f}) |")
print(f"| max abs output difference | {s['max_abs_diff']:.1e} |")
PY
