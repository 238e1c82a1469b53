#!/usr/bin/env bash
# ember set-up: system packages, the Python venv that provides LibTorch, then configure + build.
# Idempotent: a fast no-op when everything is present. Runs as root on a fresh Debian 12 machine.
#   EMBER_VENV   venv location (default ~/.cache/ember/venv, shared by clones, outside git)
#   EMBER_BUILD  build directory (default build/)
#   EMBER_SKIP_BUILD=1  stop after installing dependencies
#   EMBER_TARGETS  what to build (default: everything; scripts/demo.sh builds only `ember`)
#   EMBER_JOBS     parallel compile jobs (default: the CPUs this process may use)
#   EMBER_EXTRA_PACKAGES  more Debian packages a tool needs (scripts/fuzz.sh: clang-14 and its libFuzzer)
#   EMBER_TOKENIZER_DIR  the user cache of tokenizer rank files to fill (default ~/.cache/ember/tokenizers;
#                        the build and an install find them without it: docs/install.md)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${EMBER_VENV:-$HOME/.cache/ember/venv}"
build="${EMBER_BUILD:-$here/build}"

apt_packages=(
  cmake g++ make ninja-build ccache git pkg-config python3 python3-venv python3-pip
  libyaml-cpp-dev libfmt-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libpcre2-dev libssl-dev libgloo-dev
  python3.11-doc linux-doc-6.1 bible-kjv bible-kjv-text debian-handbook
  libplplot-dev plplot-driver-cairo
  zlib1g-dev libzstd-dev zstd  # .gz / .zst corpora (`ember prepare text`); zstd writes the tests' files
)
read -r -a extra_packages <<<"${EMBER_EXTRA_PACKAGES:-}"
apt_packages+=("${extra_packages[@]}")

log() { printf '[setup] %s\n' "$*" >&2; }

install_apt() {
  local missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt: installing ${missing[*]}"
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

install_venv() {
  local want; want="$(grep -E '^torch==' "$here/scripts/requirements.txt" | cut -d= -f3)"
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" - "$want" <<'PY' 2>/dev/null
import sys, torch, numpy, safetensors, tiktoken, yaml, transformers, tokenizers, tensorboard, pytest, setuptools, pyarrow
sys.exit(0 if torch.__version__.split('+')[0] == sys.argv[1] else 1)
PY
  then return 0; fi
  log "venv: creating $venv with torch==$want (large download, several minutes once)"
  mkdir -p "$(dirname "$venv")"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r "$here/scripts/requirements.txt"
}

# Tokenizer presets fall back on the user cache (docs/install.md); fill it from the rank files shipped in
# third_party/tokenizers (licences in that folder), copying only files that changed.
install_tokenizers() {
  local src="$here/third_party/tokenizers" dst="${EMBER_TOKENIZER_DIR:-$HOME/.cache/ember/tokenizers}"
  [ -d "$src" ] || { log "tokenizers: $src is missing (incomplete checkout?)"; return 1; }
  mkdir -p "$dst"
  for f in "$src"/*.tiktoken; do
    [ -f "$f" ] && ! cmp -s "$f" "$dst/$(basename "$f")" && cp "$f" "$dst/" && log "tokenizers: $(basename "$f") -> $dst"
  done
  return 0
}

configure_and_build() {
  local prefix; prefix="$("$venv/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    log "cmake: configuring $build (Ninja)"
    cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      -DEMBER_PYTHON="$venv/bin/python"
  elif ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$build/CMakeCache.txt"; then
    log "cmake: $build was configured with another generator than Ninja: adding a source file there" \
      "recompiles the whole library (remove $build to let set-up configure it with Ninja)"
  fi
  local targets=()
  for t in ${EMBER_TARGETS:-}; do targets+=(--target "$t"); done
  log "cmake: building ${EMBER_TARGETS:-everything}"
  cmake --build "$build" -j "${EMBER_JOBS:-$(nproc)}" "${targets[@]}"
}

# The Python package (python/, `import ember`) into the venv, with the libember_ops.so just built; skipped
# when the build made no such library (scripts/demo.sh builds only the CLI).
install_python_package() {
  [ -f "$build/python/libember_ops.so" ] || return 0
  log "python: installing python/ (import ember) into $venv"
  EMBER_BUILD="$build" "$venv/bin/pip" install -q --no-build-isolation --no-deps "$here/python"
}

install_apt
install_venv
install_tokenizers
if [ "${EMBER_SKIP_BUILD:-0}" != 1 ]; then
  configure_and_build
  install_python_package
fi
