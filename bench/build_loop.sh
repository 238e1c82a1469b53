#!/usr/bin/env bash
# The edit-build loop, measured (bench/RESULTS.md, "Edit-build loop"). Clones HEAD into scratch
# folders and builds there with a ccache of its own, so neither your tree nor your cache is touched:
#   1. a first clone's build with an empty cache (a bare machine's build)
#   2. a second clone, in a folder of another depth, built with the cache the first one filled
#      (base_dir makes their paths agree), then a no-op build
#   3. editing one .cpp (src/model/taper.cpp: a new function, so the cache cannot answer)
#   4. adding a mixer as docs/extending.md shows (a file pair copied from short_conv, one row)
#   5. editing a header (default include/ember/model/mixer.h, the mixer seam)
# For each: wall seconds, translation units compiled, ccache hits / misses, for the `ember` target
# and then for everything (tests and benchmarks relink against the changed library).
#   bash bench/build_loop.sh [--header PATH] [--dir SCRATCH] [--keep] [--only-ember]
# Needs scripts/setup.sh's tools (cmake, ninja, ccache, the venv). Prints a Markdown table and
# writes it to SCRATCH/build_loop.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${EMBER_VENV:-$HOME/.cache/ember/venv}"
header="include/ember/model/mixer.h"
scratch="${TMPDIR:-/tmp}/ember-build-loop"
keep=0 only_ember=0
while [ $# -gt 0 ]; do
  case "$1" in
    --header) header="$2"; shift 2 ;;
    --dir) scratch="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --only-ember) only_ember=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "build_loop.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -f "$here/$header" ] || { echo "build_loop.sh: --header $header: no such file in $here" >&2; exit 2; }
for tool in cmake ninja ccache git; do
  command -v "$tool" >/dev/null || { echo "build_loop.sh: $tool not found (run scripts/setup.sh)" >&2; exit 2; }
done
[ -x "$venv/bin/python" ] || { echo "build_loop.sh: no venv at $venv (run scripts/setup.sh)" >&2; exit 2; }

first="$scratch/first/ember" clone="$scratch/second/clone/ember" table="$scratch/build_loop.md"
build="$first/build"
rm -rf "$scratch" && mkdir -p "$scratch"
[ "$keep" = 1 ] || trap 'rm -rf "$scratch/first" "$scratch/second" "$scratch/ccache"' EXIT
export CCACHE_DIR="$scratch/ccache"
git clone -q --no-hardlinks "$here" "$first"
git clone -q --no-hardlinks "$here" "$clone"
prefix="$("$venv/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"

ccache_count() {  # hits and misses so far: "hits misses"
  ccache --print-stats | awk '$1=="direct_cache_hit"||$1=="preprocessed_cache_hit"{h+=$2}
    $1=="cache_miss"{m+=$2} END{print h+0, m+0}'
}

# build LABEL TARGET: one timed build, one table row.
build() {
  local label="$1" target="$2" log="$scratch/$(echo "$1-$2" | tr -c 'a-zA-Z0-9\n' '_').log"
  read -r h0 m0 < <(ccache_count)
  local start; start=$(date +%s.%N)
  if [ "$target" = all ]; then cmake --build "$build" -j "$(nproc)" >"$log" 2>&1
  else cmake --build "$build" -j "$(nproc)" --target "$target" >"$log" 2>&1; fi
  local secs; secs=$(echo "$(date +%s.%N) - $start" | bc)
  read -r h1 m1 < <(ccache_count)
  local tus links
  tus=$(grep -cE 'Building (CXX|CUDA) object' "$log" || true)
  links=$(grep -cE 'Linking (CXX|CUDA)' "$log" || true)
  local row
  row=$(printf '| %s | `%s` | %.0f | %s | %s | %s / %s |' "$label" "$target" "$secs" "$tus" "$links" \
    "$((h1 - h0))" "$((m1 - m0))")
  echo "$row" | tee -a "$table"
}

both() {  # the ember target, then everything else
  build "$1" ember
  [ "$only_ember" = 1 ] || build "$1" all
}

{
  echo "Edit-build loop at $(git -C "$here" rev-parse --short HEAD), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(date -u +%F)"
  echo
  echo '| step | target | seconds | TUs compiled | links | ccache hits / misses |'
  echo '|---|---|---|---|---|---|'
} | tee "$table"

configure() {
  cmake -S "$1" -B "$1/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DEMBER_PYTHON="$venv/bin/python" >"$scratch/configure.log" 2>&1
}
configure "$first"
both "first clone, empty cache"
build="$clone/build"
configure "$clone"
both "second clone, warm cache"
build "no-op" all

printf '\nnamespace ember { int build_loop_taper_probe() { return 1; } }\n' >>"$clone/src/model/taper.cpp"
both "edit src/model/taper.cpp"

# docs/extending.md's example, as a new kind: the short_conv pair under another name, one row.
sed -e 's/ShortConv/TokenShift/g; s/short_conv/token_shift/g; s/causal_depthwise_conv/token_shift_conv/g' \
  "$clone/include/ember/model/mixers/short_conv.h" >"$clone/include/ember/model/mixers/token_shift.h"
sed -e 's/ShortConv/TokenShift/g; s/short_conv/token_shift/g; s/causal_depthwise_conv/token_shift_conv/g' \
  "$clone/src/model/mixers/short_conv.cpp" >"$clone/src/model/mixers/token_shift.cpp"
python3 - "$clone/src/model/mixer_registry.cpp" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace('#include "ember/model/mixers/titans/titans.h"\n',
              '#include "ember/model/mixers/titans/titans.h"\n#include "ember/model/mixers/token_shift.h"\n', 1)
row = ('      {.name = "token_shift",\n       .description = "build-loop probe",\n'
       '       .default_options = default_kind_options<TokenShiftConfig>,\n'
       '       .make = [](const MixerContext& c) { return std::make_shared<TokenShift>(c, c.config.get<TokenShiftConfig>()); }},\n')
anchor = '      {.name = "titans",'
assert anchor in s, "mixer_registry.cpp: registry anchor not found"
open(p, 'w').write(s.replace(anchor, row + anchor, 1))
PY
both "add a mixer (file pair + row)"
kinds="$("$build/tools/ember" config --kinds)"  # not piped into grep -q: SIGPIPE under pipefail
grep -q '^ *token_shift ' <<<"$kinds" || { echo "build_loop.sh: the new mixer did not register" >&2; exit 1; }

printf '\n// build_loop.sh probe\nnamespace ember { int build_loop_probe(); }\n' >>"$clone/$header"
both "edit $header"

echo | tee -a "$table"
echo "Logs in $scratch; table in $table" >&2
