#!/usr/bin/env bash
# The suite under AddressSanitizer + UndefinedBehaviorSanitizer (docs/building.md, "Sanitizers"):
# configures build-sanitize/ (gcc, RelWithDebInfo, CUDA and the Python operators off), builds the CLI,
# the unit tests and the fuzz targets' corpus replays, then runs them and the CLI tests with every
# finding fatal.
#   bash scripts/sanitize.sh                  everything but the longest trainings
#   bash scripts/sanitize.sh -R 'Safetensors' extra ctest arguments select tests
#   EMBER_SANITIZE=address  another -fsanitize= list (default address,undefined)
#   EMBER_SANITIZE_BUILD    build directory (default build-sanitize/)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${EMBER_VENV:-$HOME/.cache/ember/venv}"
build="${EMBER_SANITIZE_BUILD:-$here/build-sanitize}"
sanitize="${EMBER_SANITIZE:-address,undefined}"
log() { printf '[sanitize] %s\n' "$*" >&2; }

EMBER_SKIP_BUILD=1 bash "$here/scripts/setup.sh"  # packages and the venv, no build
prefix="$("$venv/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
log "configuring $build with -fsanitize=$sanitize"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" \
  -DEMBER_PYTHON="$venv/bin/python" -DEMBER_SANITIZE="$sanitize" -DEMBER_CUDA=OFF \
  -DEMBER_BUILD_PYTHON=OFF -DEMBER_BUILD_BENCH=OFF >/dev/null
log "building ember, ember_unit_tests and the fuzz replays"
cmake --build "$build" -j "${EMBER_JOBS:-$(nproc)}" --target ember ember_unit_tests ember_fuzz_targets

# halt_on_error: the first finding ends the process with a non-zero exit, so its test fails.
# LibTorch keeps process-lifetime allocations (operator registries, thread pools) that LeakSanitizer
# would report at every exit: scripts/lsan.supp names those libraries, never ember's own code.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$here/scripts/lsan.supp:print_suppressions=0"
# The ember binary ends with _exit() after its command (tools/ember.cpp): with this it exits
# normally, so that LeakSanitizer's check at exit runs.
export EMBER_FULL_EXIT=1
# Left out by default: the two in-context trainings (minutes each even uninstrumented), the test
# that builds a downstream project against the installed library, the one that holds the memory
# estimate against the resident set (ASan's shadow memory and quarantine are in it), and the ones
# that need a GPU.
exclude='^(cli\.mixers_learn|cli\.recall|cli\.install|cli\.memory)$'
start=$(date +%s)
status=0
ctest --test-dir "$build" --output-on-failure -j "${EMBER_TEST_JOBS:-2}" -E "$exclude" -LE gpu "$@" || status=$?
log "ctest finished in $(( $(date +%s) - start )) s with status $status"
exit $status
