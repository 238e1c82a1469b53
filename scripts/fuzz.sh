#!/usr/bin/env bash
# Coverage-guided fuzzing of ember's parsers of outside files (docs/building.md, "Fuzzing"):
# builds tests/fuzz's targets as libFuzzer binaries (clang, AddressSanitizer + UBSan) in
# build-fuzz/, fuzzes each for SECONDS from its committed seeds, and prints per target the
# executions, the coverage reached and the crashes.
#   bash scripts/fuzz.sh 60               every target for 60 s
#   bash scripts/fuzz.sh 600 npy shard    those targets only
#   EMBER_FUZZ_RUNS=N   stop a target after N executions (SECONDS still caps it): a campaign is
#                       EMBER_FUZZ_RUNS=1000000 bash scripts/fuzz.sh 3600
#   EMBER_FUZZ_JOBS     targets fuzzed beside each other (default: the number of cores)
#   EMBER_FUZZ_WORKERS  processes per target, sharing its corpus and splitting EMBER_FUZZ_RUNS
#                       (default 1): a slow target on every core, with EMBER_FUZZ_JOBS=1
#   EMBER_FUZZ_BUILD    build directory (default build-fuzz/)
# What the fuzzer adds to a corpus stays in build-fuzz/corpus/<target>/ (a later run goes on
# from it). A crash leaves its input in build-fuzz/findings/<target>/ and fails the run: fix the
# cause, then copy the input into tests/fuzz/corpus/<target>/ so that the suite replays it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${EMBER_VENV:-$HOME/.cache/ember/venv}"
build="${EMBER_FUZZ_BUILD:-$here/build-fuzz}"
log() { printf '[fuzz] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

[[ $# -ge 1 && $1 =~ ^[0-9]+$ && $1 -gt 0 ]] || die "usage: bash scripts/fuzz.sh SECONDS [TARGET...] (seconds per target)"
seconds=$1; shift

# Packages (with clang 14 and its libFuzzer runtime) and the venv, no build.
EMBER_EXTRA_PACKAGES="clang-14 libclang-rt-14-dev" EMBER_SKIP_BUILD=1 bash "$here/scripts/setup.sh"
prefix="$("$venv/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
log "configuring $build (clang 14, libFuzzer, ASan, UBSan)"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER=clang++-14 -DEMBER_PYTHON="$venv/bin/python" -DEMBER_FUZZ=ON -DEMBER_CUDA=OFF \
  -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_PYTHON=OFF -DEMBER_BUILD_BENCH=OFF >/dev/null
log "building the fuzz targets"
cmake --build "$build" -j "${EMBER_JOBS:-$(nproc)}" --target ember_fuzz_targets

all=()
for src in "$here"/tests/fuzz/fuzz_*.cpp; do n=$(basename "$src" .cpp); all+=("${n#fuzz_}"); done
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ -x "$build/tests/fuzz/fuzz_$t" ]] || die "no fuzz target '$t' (targets: ${all[*]})"
done

jobs_max="${EMBER_FUZZ_JOBS:-$(nproc)}"  # before OMP_NUM_THREADS: GNU nproc honours it
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$here/scripts/lsan.supp:print_suppressions=0"
export OMP_NUM_THREADS=1
workers="${EMBER_FUZZ_WORKERS:-1}"
run_target() {  # fuzzes one target; worker w logs to build-fuzz/logs/<t>.<w>.log
  local t=$1 w runs="${EMBER_FUZZ_RUNS:--1}"
  [[ $runs -gt 0 ]] && runs=$(( (runs + workers - 1) / workers ))
  mkdir -p "$build/corpus/$t" "$build/findings/$t" "$build/logs"
  rm -f "$build/logs/$t".*.log
  for ((w = 0; w < workers; w++)); do
    (cd "$build/findings/$t" && "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -runs="$runs" -timeout=20 \
       -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$build/findings/$t/" \
       "$build/corpus/$t" "$here/tests/fuzz/corpus/$t") >"$build/logs/$t.$w.log" 2>&1 &
  done
  wait
}
log "fuzzing ${targets[*]} for $seconds s each, $jobs_max at a time"
for t in "${targets[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $jobs_max ]]; do wait -n || true; done
  run_target "$t" &
done
wait

status=0
printf '%-18s %14s %10s %8s %8s %8s %8s\n' target executions exec/s seconds cov corpus crashes
final_stat() {  # final_stat NAME FILES...: libFuzzer's final statistic NAME of each worker
  local name=$1; shift
  sed -n "s/^stat::$name: *//p" "$@" 2>/dev/null || true
}
for t in "${targets[@]}"; do
  logs=("$build/logs/$t".*.log)
  # A worker that crashed has no final line: each figure is what the logs hold (set -e spares these).
  execs=$(final_stat number_of_executed_units "${logs[@]}" | awk '{s += $1} END {if (NR) print s}' || true)
  rate=$(final_stat average_exec_per_sec "${logs[@]}" | awk '{s += $1} END {if (NR) print s}' || true)
  took=$( (grep -ohE '^Done [0-9]+ runs in [0-9]+ second' "${logs[@]}" || true) | awk '{if ($5 > m) m = $5} END {if (NR) print m}')
  cov=$( (grep -ohE 'cov: [0-9]+' "${logs[@]}" || true) | awk '{if ($2 > m) m = $2} END {if (NR) print m}')
  corp=$(find "$build/corpus/$t" -type f | wc -l)
  crashes=$(find "$build/findings/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'oom-*' \
    -o -name 'timeout-*' \) | wc -l)
  printf '%-18s %14s %10s %8s %8s %8s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "${took:-?}" "${cov:-?}" "${corp:-?}" \
    "$crashes"
  if [[ $crashes -gt 0 || -z $execs ]]; then
    status=1
    log "$t: see ${logs[0]} and $build/findings/$t/"
  fi
done
exit $status
