#!/usr/bin/env bash
# Fetch the Debian 12 packages ember builds against that a bare CUDA image lacks (no apt, no network
# there), as .deb files into .deps/debs (git-ignored). bench/gpu_check.sh unpacks them with
# `dpkg -x` into .deps/prefix and builds against that prefix. Run here, then carry .deps/debs:
#   bash scripts/gpu_deps.sh && device run --carry .deps/debs 'bash bench/gpu_check.sh'
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$here/.deps/debs"

# Headers (-dev) and the shared libraries they link to; header-only ones need nothing more.
packages=(
  libyaml-cpp-dev libyaml-cpp0.7
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9
  libcli11-dev nlohmann-json3-dev
  libpcre2-dev libpcre2-8-0
  libssl-dev libssl3
  zlib1g-dev zlib1g libzstd-dev libzstd1
  libgloo-dev  # headers only: ProcessGroupGloo.hpp includes them, the symbols come from the wheel
)

mkdir -p "$out"
cd "$out"
for p in "${packages[@]}"; do
  ls "${p}"_*.deb >/dev/null 2>&1 || apt-get download "$p" 2> >(grep -v unsandboxed >&2) >/dev/null || {
    echo "gpu_deps: apt-get download $p failed (is Debian's archive reachable?)" >&2
    exit 1
  }
done
du -sh "$out" | awk -v n="${#packages[@]}" '{print "gpu_deps: " n " packages, " $1 " in " $2}'
