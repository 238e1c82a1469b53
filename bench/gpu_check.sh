#!/usr/bin/env bash
# The one prepared GPU script, meant for a single `device` call of under 8 minutes:
#   1. build ember with CUDA (sm_90) against that machine's own torch, with the Debian libraries it
#      lacks unpacked from .deps/debs (scripts/gpu_deps.sh fetches them here; carry .deps/debs);
#   2. the gpu-labelled checks: CUDA LEV and RoPE kernels against the CPU ones, then their timing; which SDPA
#      kernel (flash / memory-efficient / cuDNN / math) the big configs' attention gets, and its time;
#   3. NCCL: the gpu.nccl_collectives check (a process group over 1 GPU, or 2), then `ember launch` of
#      the tiny model on the GPU(s): data parallel over NCCL when there are 2, plain CUDA training on 1;
#   4. the Python package's CUDA tests (python/tests/test_cuda.py: ops and modules on the GPU against the CPU,
#      gradcheck and torch.compile there), with libember_ops from this build;
#   5. a few bf16 training steps of configs/tapered/1.3b.yaml and configs/leviathan/1.2b.yaml + lev.yaml
#      on random tokens: tokens/s, MFU against the datasheet's dense bf16 peak and peak memory.
# Usage: bench/gpu_check.sh [--build-only|--compare] [build_dir]
#   --build-only: step 1 only, no GPU needed; --compare: steps 1 and 4 and the fused kernels' checks (each
#   kernel against the CPU loops, bf16 training fused against ATen, `ember kernels --device cuda`), then
#   bench/gpu_compare.sh in place of steps 2, 3 and 5 (ember against Python at its best, and LEV against the untied head, in ABAB rounds)
#   EMBER_PYTHON           python whose torch provides LibTorch (default /opt/torch/.venv/bin/python3 if
#                          present, else ember's venv)
#   EMBER_GPU_STEPS        training steps per big config (default 12)
#   EMBER_PEAK_TFLOPS      dense bf16 peak for MFU (default 989: H100/H200 SXM datasheet)
#   EMBER_CMAKE_ARGS       extra CMake arguments
#   EMBER_GPU_DEADLINE_S   the whole script's budget in seconds (default 500: call it with timeout_s
#                          540): the build and each check get at most what is left (a check with under
#                          15 s left is reported as not run), so a hang costs that check alone and the
#                          script still reports
# Where $OUT is set (the device call's output folder) the whole output is also written to
# $OUT/gpu_check.log, and the logs and summaries of the checks to $OUT/gpu_logs.tgz.
set -euo pipefail
tee_pid=""
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT" && exec > >(tee -a "$OUT/gpu_check.log") 2>&1 && tee_pid=$!; fi
finish() {  # the checks' logs to $OUT; then let tee write the last lines before the call ends
  if [ -n "${OUT:-}" ] && [ -n "${work:-}" ]; then
    (cd "$work" && shopt -s nullglob && logs=(*.out *.json) && ((${#logs[@]})) && tar czf "$OUT/gpu_logs.tgz" "${logs[@]}") || true
  fi
  if [ -n "${work:-}" ]; then rm -rf "$work"; fi
  if [ -n "$tee_pid" ]; then exec >&- 2>&-; wait "$tee_pid" 2>/dev/null || true; fi
}
trap finish EXIT
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_only=0 compare=0
[ "${1:-}" = "--build-only" ] && { build_only=1; shift; }
[ "${1:-}" = "--compare" ] && { compare=1; shift; }
build="${1:-$here/build-gpu}"
steps="${EMBER_GPU_STEPS:-12}"
peak_tflops="${EMBER_PEAK_TFLOPS:-989}"
deadline=$((SECONDS + ${EMBER_GPU_DEADLINE_S:-500}))
say() { printf '\n=== [%ds] %s\n' "$SECONDS" "$*"; }
budget() {  # a check's own limit in seconds, cut to what is left of the deadline (at least 1)
  local left=$((deadline - SECONDS))
  ((left < 1)) && left=1
  echo $(($1 < left ? $1 : left))
}
failed=()  # a failing check is reported and the script goes on to the next; exit 1 at the end
check() {  # named by the program a timeout runs, else by the command and its first argument
  local name="$1${2:+ $2}"
  [ "$1" = timeout ] && name="$(basename "${@: -1}")"
  if ((deadline - SECONDS < 15)); then echo "NOT RUN (the deadline is spent): $name"; failed+=("$name (not run)"); return; fi
  "$@" || { echo "FAILED: $*"; failed+=("$name"); }
}

if [ -n "${EMBER_PYTHON:-}" ]; then py="$EMBER_PYTHON"
elif [ -x /opt/torch/.venv/bin/python3 ]; then py=/opt/torch/.venv/bin/python3
else py="${EMBER_VENV:-$HOME/.cache/ember/venv}/bin/python"; fi
if [ "$build_only" = 0 ]; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || { echo "gpu_check: no GPU"; exit 2; }
fi

say "dependencies"
echo "nvcc: $(nvcc --version 2>/dev/null | tail -1 || echo none on PATH) | $(cmake --version | head -1) | $(g++ --version | head -1)"
prefix_path="$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
debs=("$here"/.deps/debs/*.deb)
if [ -e "${debs[0]}" ]; then
  deps="$here/.deps/prefix"
  for d in "${debs[@]}"; do dpkg -x "$d" "$deps"; done
  # Their pkg-config files say prefix=/usr, where a bare image has no such headers: point them here.
  find "$deps/usr" -name '*.pc' -exec sed -i "s|^prefix=/usr\$|prefix=$deps/usr|" {} +
  prefix_path="$prefix_path;$deps/usr"
  # Debian keeps some headers (openssl/opensslconf.h) under the multiarch folder, which the compiler
  # searches only beneath the system's /usr/include, not the prefix's.
  export CPATH="$deps/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
  export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "unpacked ${#debs[@]} Debian packages into $deps"
else
  echo "no .deps/debs: building against the system's libraries"
fi

say "build ($build)"
nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
generator=(); command -v ninja >/dev/null && generator=(-G Ninja)
[ -f "$build/CMakeCache.txt" ] && ! grep -q "CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}" "$build/CMakeCache.txt" && rm -rf "$build"
# shellcheck disable=SC2086
TORCH_CUDA_ARCH_LIST=9.0 cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix_path" -DEMBER_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DEMBER_BUILD_TESTS=OFF -DEMBER_PYTHON="$py" ${EMBER_CMAKE_ARGS:-} >"$build.configure.log" \
  || { cat "$build.configure.log"; [ -n "${OUT:-}" ] && cp "$build.configure.log" "$OUT/"; exit 1; }
grep "ember:" "$build.configure.log" || true
build_start=$SECONDS
build_limit=$(budget 330)
[ "$build_only" = 1 ] && build_limit=7200
timeout "$build_limit" cmake --build "$build" -j "$(nproc)" --target ember ember_gpu_lev_kernels \
  ember_gpu_rope_kernel ember_gpu_xent_kernel ember_gpu_device_memory ember_gpu_fused_projections ember_gpu_swiglu_gate \
  ember_gpu_rms_norm ember_gpu_training_fusions ember_gpu_nccl_collectives ember_lev_gpu_check \
  ember_sdpa_gpu_check ember_ops \
  || { echo "gpu_check: the build failed or ran past ${build_limit} s"; exit 1; }
echo "build: $((SECONDS - build_start)) s"
ember="$build/tools/ember"
"$ember" --version
[ "$build_only" = 1 ] && exit 0

work="$(mktemp -d)"
random_tokens() {  # dir vocab n_train n_val: uniform random tokens as uint32 shards
  "$py" - "$@" <<'PY'
import sys, numpy as np
out, vocab, sizes = sys.argv[1], int(sys.argv[2]), {"train": int(sys.argv[3]), "val": int(sys.argv[4])}
rng = np.random.default_rng(0)
for split, n in sizes.items():
    header = np.zeros(256, dtype=np.int32); header[:3] = [20240801, 1, n]
    with open(f"{out}/{split}_000.bin", "wb") as f:
        f.write(header.tobytes()); f.write(rng.integers(vocab, size=n, dtype=np.uint32).tobytes())
PY
}

big_run() {  # name vocab config...: a few bf16 steps on random tokens; the summary in $work/$name.json
  local name="$1" vocab="$2"; shift 2
  mkdir -p "$work/$name.data" && random_tokens "$work/$name.data" "$vocab" 1000000 100000 || return 1
  local sets=(--set "data.train=[$work/$name.data/train_*.bin]" --set "data.val=[$work/$name.data/val_*.bin]"
    --set train.steps="$steps" --set optim.warmup_steps=2 --set train.grad_accum=1 --set log.every=2 --set eval.every=0 --set eval.batches=2
    --set checkpoint.final=false)
  timeout -s KILL "$(budget 150)" "$ember" train "$@" --run-dir "$work/$name" "${sets[@]}" >"$work/$name.out" 2>&1 || { tail -20 "$work/$name.out"; return 1; }
  grep -E "parameters|memory per rank|step " "$work/$name.out" | tail -5
  if [ -d "$work/$name/profile" ]; then  # --profile among the arguments: the table, its summary, the trace
    sed -n '/profile of steps/,/idle/p' "$work/$name.out"
    cp "$work/$name/profile/summary.json" "$work/${name}_profile.json"
    [ -n "${OUT:-}" ] && gzip -c "$work/$name/profile/trace.json" >"$OUT/${name}_trace.json.gz"
  fi
  "$py" - "$work/$name/metrics.jsonl" "$work/$name.out" "$name" "$peak_tflops" <<'PY' || return 1
import json, re, statistics, sys
metrics, out, name, peak = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]) * 1e12
recs = [json.loads(l) for l in open(metrics) if '"train"' in l]
steady = recs[1:] or recs  # the first window holds the warm-up (allocator, cuBLAS plans)
tok_s = statistics.median(r["tokens_per_s"] for r in steady)
log = open(out).read()
gflop = float(re.search(r"([0-9.e+]+) GFLOP/token", log).group(1))
summary = {"name": name, "tokens_per_s": tok_s, "gflop_per_token": gflop, "params": int(re.search(r"(\d+) parameters", log).group(1)),
           "mfu_datasheet": tok_s * gflop * 1e9 / peak, "mfu_measured": statistics.median(r["mfu"] for r in steady),
           "peak_allocated_gib": recs[-1].get("device_peak_allocated_gib"), "peak_reserved_gib": recs[-1].get("device_peak_reserved_gib")}
print(f"RESULT {name}: {tok_s:,.0f} tok/s | {gflop:.3g} GFLOP/token | "
      f"MFU {100 * summary['mfu_datasheet']:.1f}% of {peak / 1e12:.0f} TFLOP/s "
      f"({100 * summary['mfu_measured']:.1f}% of the measured matmul peak) | "
      f"peak allocated {summary['peak_allocated_gib']:.1f} GiB, reserved {summary['peak_reserved_gib']:.1f} GiB")
json.dump(summary, open(out[:-len(".out")] + ".json", "w"))
PY
  rm -rf "$work/$name" "$work/$name.data"
}

lev_overhead() {  # untied_run lev_run: LEV's step time over the untied model's, from their median tokens/s
  "$py" - "$work/$1.json" "$work/$2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(f"RESULT LEV step overhead vs untied ({b['name']} against {a['name']}): "
      f"{100 * (a['tokens_per_s'] / b['tokens_per_s'] - 1):+.1f}% "
      f"(untied {a['tokens_per_s']:.0f} tok/s, LEV {b['tokens_per_s']:.0f} tok/s)")
PY
}

python_cuda() {  # the Python package's operators and modules on the GPU, loading this build's libember_ops
  EMBER_OPS_LIBRARY="$build/python/libember_ops.so" EMBER_BIN="$ember" PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}" \
    timeout "$(budget 150)" "$py" -m pytest -q -p no:cacheprovider -rs "$here/python/tests/test_cuda.py" \
    "$here/python/tests/test_lev.py::test_cuda_kernels_equal_the_cpu_ones" 2>&1 | tee "$work/python_cuda.out"
  ! grep -q "skipped" "$work/python_cuda.out" || { echo "tests were skipped on a GPU machine"; return 1; }
}
say "the Python package on CUDA: python/tests/test_cuda.py"
check python_cuda

# The fused kernels against the CPU loops and ATen, and the on-device check that kernels.* = auto
# runs (`ember kernels`), in both modes: they are what a first run on an unseen GPU must trust.
say "fused kernels: each against the CPU loops and ATen; bf16 tied checkpointed training fused vs ATen; ember kernels"
for t in xent_kernel rms_norm swiglu_gate rope_kernel fused_projections training_fusions; do
  check timeout "$(budget 60)" "$build/tests/gpu/ember_gpu_$t"
done
for precision in fp32 bf16; do check timeout "$(budget 60)" "$ember" kernels --device cuda --precision "$precision"; done

if [ "$compare" = 1 ]; then
  # shellcheck source=bench/gpu_compare.sh
  source "$here/bench/gpu_compare.sh"
  [ ${#failed[@]} = 0 ] || { echo "gpu_check --compare: FAILED: ${failed[*]}"; exit 1; }
  echo "gpu_check --compare: all comparisons ran"
  exit 0
fi

say "gpu tests: CUDA LEV kernels vs CPU (fp64/fp32, both normalisations), peak memory, NCCL collectives"
check timeout "$(budget 60)" "$build/tests/gpu/ember_gpu_lev_kernels"
check timeout "$(budget 30)" "$build/tests/gpu/ember_gpu_device_memory"
check timeout "$(budget 60)" "$build/tests/gpu/ember_gpu_nccl_collectives"
check timeout "$(budget 30)" "$build/bench/ember_lev_gpu_check"
check timeout "$(budget 60)" "$build/bench/ember_sdpa_gpu_check"

ngpu="$("$py" -c 'import torch; print(torch.cuda.device_count())')"; ranks=$(( ngpu >= 2 ? 2 : 1 ))
say "ember launch of the tiny model on $ranks GPU(s)$([ "$ranks" = 2 ] && echo ", data parallel over NCCL")"
launch_smoke() {
  mkdir -p "$work/tiny" && random_tokens "$work/tiny" 256 400000 40000 || return 1
  timeout -k 15 "$(budget 90)" "$ember" launch -n "$ranks" -- "$ember" train -c "$here/configs/tiny.yaml" --run-dir "$work/nccl" \
    --set "data.train=[$work/tiny/train_*.bin]" --set "data.val=[$work/tiny/val_*.bin]" \
    --set train.device=cuda --set distributed.backend=nccl --set train.steps=20 --set optim.warmup_steps=2 --set eval.every=10 \
    --set checkpoint.every=10 >"$work/nccl.out" 2>&1 || { tail -30 "$work/nccl.out"; return 1; }
  grep -E "world|backend|step +20|val|checkpoint" "$work/nccl.out" | tail -8
  [ -e "$work/nccl/checkpoints/step_20" ] || { echo "no checkpoint at step 20"; return 1; }
  if [ "$ranks" = 2 ]; then
    grep -q "distributed: 2 ranks .* over nccl" "$work/nccl.out" || { echo "the 2 ranks did not use NCCL"; return 1; }
  fi
  echo "$ranks rank(s) trained on CUDA, evaluated and checkpointed$([ "$ranks" = 2 ] && echo " over NCCL")"
}
check launch_smoke

say "configs/tapered/1.3b.yaml: $steps bf16 steps, micro-batch 4 x 4096"
check big_run tapered_1.3b 128256 -c "$here/configs/tapered/1.3b.yaml"
say "configs/leviathan/1.2b.yaml + lev.yaml: $steps bf16 steps, micro-batch 8 x 2048"
check big_run leviathan_1.2b_lev 200376 -c "$here/configs/leviathan/1.2b.yaml" -c "$here/configs/leviathan/lev.yaml"

say "configs/leviathan/1.2b.yaml + untied.yaml: the same steps, the baseline of LEV's step overhead"
check big_run leviathan_1.2b_untied 200376 -c "$here/configs/leviathan/1.2b.yaml" -c "$here/configs/leviathan/untied.yaml"
check lev_overhead leviathan_1.2b_untied leviathan_1.2b_lev

[ ${#failed[@]} = 0 ] || { echo "gpu_check: FAILED: ${failed[*]}"; exit 1; }
echo "gpu_check: all checks passed"
