# cmake --install: bin/ember, the core library, the public headers (each quoted include installed
# too), the tokenizer rank files under share/ember/tokenizers and the CMake package. The installed
# CLI finds the presets with an empty HOME, also after the prefix is moved; the error names every
# place looked. examples/custom_model builds against the moved prefix with find_package(ember) and
# trains (its loss falls to half), and tests/downstream, a program linking the library, encodes with
# a preset from the moved prefix's data with an empty HOME. docs/install.md.
source "$(dirname "$0")/lib_common.sh"
BUILD="${EMBER_BUILD_DIR:-}"
[ -n "$BUILD" ] && [ -f "$BUILD/CMakeCache.txt" ] || fail "EMBER_BUILD_DIR ('$BUILD') is not a configured build tree (tests/CMakeLists.txt sets it)"
SRC="${EMBER_SOURCE_DIR:?EMBER_SOURCE_DIR is not set (tests/CMakeLists.txt sets it)}"
DATA="${EMBER_TOKENIZER_DATA:?EMBER_TOKENIZER_DATA is not set}"

cmake --install "$BUILD" --prefix "$SCRATCH/prefix" >install.log || { cat install.log >&2; fail "cmake --install failed"; }
P="$SCRATCH/prefix"
[ -x "$P/bin/ember" ] || fail "no bin/ember in the prefix"
for f in lib/libember_core.a lib/libember_log.a lib/cmake/ember/emberConfig.cmake lib/cmake/ember/emberTargets.cmake \
         lib/cmake/ember/emberConfigVersion.cmake lib/cmake/ember/EmberDependencyTargets.cmake \
         include/ember/model/lev.h include/ember/data/tokenizer_search.h include/ember/train/adamw.h \
         share/ember/tokenizers/NOTICE share/ember/tokenizers/LICENSE-tiktoken share/ember/tokenizers/LICENSE-llama3; do
  [ -s "$P/$f" ] || fail "$f is missing from the prefix"
done
for enc in r50k_base p50k_base cl100k_base o200k_base llama3; do
  cmp -s "$DATA/$enc.tiktoken" "$P/share/ember/tokenizers/$enc.tiktoken" || fail "share/ember/tokenizers/$enc.tiktoken differs from $DATA"
done
[ ! -e "$P/include/ember/pch.h" ] || fail "the build's precompiled header was installed"
# Every header an installed header includes by a quoted path is installed (no build-tree header).
missing=$(cd "$P/include" && grep -rhoE '^#include "[^"]+"' ember | sed 's/#include "\(.*\)"/\1/' | sort -u \
  | while read -r h; do [ -f "$h" ] || echo "$h"; done)
[ -z "$missing" ] || fail "installed headers include headers that are not installed: $missing"
! grep -q "$SRC\|$BUILD" "$P/lib/cmake/ember/emberTargets.cmake" || fail "the exported targets name the source or build tree"

# Presets from the installed data, whatever HOME is; a moved prefix finds its own.
mkdir -p home empty
printf 'Hello, world! 123\n' >text.txt
EMBER_TOKENIZER_DIR="$DATA" "$EMBER" tokenizer encode --preset cl100k_base <text.txt >want.txt
mv "$P" "$SCRATCH/moved"
P="$SCRATCH/moved"
env -u EMBER_TOKENIZER_DIR -u XDG_CACHE_HOME HOME="$SCRATCH/home" "$P/bin/ember" tokenizer encode --preset cl100k_base \
  <text.txt >got.txt || fail "the installed ember did not find the cl100k_base preset with an empty HOME"
cmp -s want.txt got.txt || fail "the installed ember encodes differently from the build's"
# A binary with no data beside it: the error lists every place looked, in order.
mkdir -p lonely/bin
ln "$P/bin/ember" lonely/bin/ember 2>/dev/null || cp "$P/bin/ember" lonely/bin/ember
EMBER_TOKENIZER_DIR="$SCRATCH/empty" XDG_CACHE_HOME="$SCRATCH/xdg" \
  expect_error "needs its rank file cl100k_base.tiktoken, not found in $SCRATCH/empty (\$EMBER_TOKENIZER_DIR), $SCRATCH/lonely/share/ember/tokenizers (relative to the binary), " \
  lonely/bin/ember tokenizer encode --preset cl100k_base <text.txt
grep -qF "(the install prefix), $SCRATCH/xdg/ember/tokenizers (the user cache, \$XDG_CACHE_HOME)" err.txt \
  || { cat err.txt >&2; fail "the error does not end with the install prefix and the user cache"; }

# A downstream project against the moved prefix: find_package(ember), ember::core, and it trains.
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$SRC/examples/custom_model" -B example "${gen[@]}" "${launcher[@]}" -DCMAKE_PREFIX_PATH="$P" \
  >configure.log 2>&1 || { tail -30 configure.log >&2; fail "examples/custom_model does not configure against the prefix"; }
cmake --build example >build.log 2>&1 || { tail -30 build.log >&2; fail "examples/custom_model does not build against the prefix"; }
./example/custom_model >train.log 2>&1 || { tail -20 train.log >&2; fail "examples/custom_model did not train"; }
grep -q "^mean loss: first 5 steps" train.log || fail "examples/custom_model printed no loss summary"

# A program of one's own that links the library finds the installed presets too, through the
# package it was built against (the folder comes from where find_package found it: the moved prefix),
# with an empty HOME; the error names that folder when the data is gone.
# It starts from the compilers examples/custom_model just detected (C++ and, with a CUDA Torch, nvcc:
# 2 s of a fresh configure), as a build tree configured before does; find_package(ember) and all
# that Torch's package finds run again from scratch.
mkdir -p downstream/CMakeFiles
cp -r example/CMakeFiles/[0-9]*.[0-9]* downstream/CMakeFiles/ || fail "no CMakeFiles/<cmake version> in examples/custom_model's build"
cmake -S "$SRC/tests/downstream" -B downstream "${gen[@]}" "${launcher[@]}" -DCMAKE_PREFIX_PATH="$P" \
  -DCMAKE_PLATFORM_INFO_INITIALIZED:INTERNAL=1 \
  >downstream_configure.log 2>&1 || { tail -30 downstream_configure.log >&2; fail "tests/downstream does not configure"; }
cmake --build downstream >downstream_build.log 2>&1 || { tail -30 downstream_build.log >&2; fail "tests/downstream does not build"; }
env -u EMBER_TOKENIZER_DIR -u XDG_CACHE_HOME HOME="$SCRATCH/home" ./downstream/encode_preset cl100k_base <text.txt \
  >downstream.txt 2>downstream.err || { cat downstream.err >&2; fail "a program linking the installed library found no preset"; }
cmp -s want.txt downstream.txt || fail "the downstream program encodes differently from ember"
mv "$P/share/ember/tokenizers" "$P/share/ember/tokenizers.away"
env -u XDG_CACHE_HOME EMBER_TOKENIZER_DIR="$SCRATCH/empty" HOME="$SCRATCH/home" ./downstream/encode_preset cl100k_base \
  <text.txt >/dev/null 2>downstream.err && fail "the downstream program encoded without its rank file"
grep -qF "$P/share/ember/tokenizers (the installed package (find_package))" downstream.err \
  || { cat downstream.err >&2; fail "the error does not name the installed package's folder"; }
mv "$P/share/ember/tokenizers.away" "$P/share/ember/tokenizers"
echo "OK"
