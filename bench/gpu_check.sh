#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build ember against the CUDA LibTorch of the venv's torch wheel
# with the CUDA kernels on, compare the CUDA LEV spline kernels with the CPU ones and time them. Usage: bench/gpu_check.sh [build_dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build-gpu}"
py="${EMBER_PYTHON:-${EMBER_VENV:-$HOME/.cache/ember/venv}/bin/python}"
prefix="$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || { echo "no GPU"; exit 2; }
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DEMBER_CUDA=ON \
  -DEMBER_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target ember_gpu_lev_kernels ember_lev_gpu_check
"$build/tests/gpu/ember_gpu_lev_kernels"   # CUDA vs CPU kernels, fp64/fp32, both normalisations
"$build/bench/ember_lev_gpu_check"
