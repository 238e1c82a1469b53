# Sanitizer builds (scripts/sanitize.sh, docs/building.md "Sanitizers"): EMBER_SANITIZE is a list for
# -fsanitize=, e.g. "address,undefined". Every C++ target of the tree is instrumented, so a fault
# in ember's own code (the library, the CLI, the kernels, the tests) stops the process with its
# report; LibTorch itself stays the wheel's uninstrumented build. -fno-sanitize-recover makes a
# UBSan finding fatal as well, instead of a line in the output that a passing test would hide.
set(EMBER_SANITIZE "" CACHE STRING "Sanitizers to build with (-fsanitize=...), e.g. address,undefined; empty: none")
# EMBER_FUZZ (scripts/fuzz.sh, docs/building.md "Fuzzing"): tests/fuzz's targets become libFuzzer
# binaries. Every TU gets libFuzzer's coverage counters (fuzzer-no-link) beside the sanitizers, so
# the fuzzer sees the branches of ember's parsers; clang only.
option(EMBER_FUZZ "Build tests/fuzz as libFuzzer binaries (clang, with the sanitizers)" OFF)
set(EMBER_SANITIZE_LIST "${EMBER_SANITIZE}")
if(EMBER_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ember: EMBER_FUZZ needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}: "
      "configure with -DCMAKE_CXX_COMPILER=clang++-14 (scripts/fuzz.sh does)")
  endif()
  if(NOT EMBER_SANITIZE_LIST)
    set(EMBER_SANITIZE_LIST "address,undefined")
  endif()
  set(EMBER_SANITIZE_LIST "fuzzer-no-link,${EMBER_SANITIZE_LIST}")
endif()
if(EMBER_SANITIZE_LIST)
  if(NOT EMBER_CUDA STREQUAL "OFF")
    message(FATAL_ERROR "ember: EMBER_SANITIZE needs -DEMBER_CUDA=OFF (nvcc code is not instrumented)")
  endif()
  set(_ember_sanitize_flags -fsanitize=${EMBER_SANITIZE_LIST} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_ember_sanitize_flags}>")
  add_link_options(-fsanitize=${EMBER_SANITIZE_LIST})
  message(STATUS "ember: sanitizers ${EMBER_SANITIZE_LIST}")
endif()
