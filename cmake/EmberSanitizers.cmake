# Sanitizer builds (scripts/sanitize.sh, docs/building.md "Sanitizers"): EMBER_SANITIZE is a list for
# -fsanitize=, e.g. "address,undefined". Every C++ target of the tree is instrumented, so a fault
# in ember's own code (the library, the CLI, the kernels, the tests) stops the process with its
# report; LibTorch itself stays the wheel's uninstrumented build. -fno-sanitize-recover makes a
# UBSan finding fatal as well, instead of a line in the output that a passing test would hide.
set(EMBER_SANITIZE "" CACHE STRING "Sanitizers to build with (-fsanitize=...), e.g. address,undefined; empty: none")
if(EMBER_SANITIZE)
  if(NOT EMBER_CUDA STREQUAL "OFF")
    message(FATAL_ERROR "ember: EMBER_SANITIZE needs -DEMBER_CUDA=OFF (nvcc code is not instrumented)")
  endif()
  set(_ember_sanitize_flags -fsanitize=${EMBER_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_ember_sanitize_flags}>")
  add_link_options(-fsanitize=${EMBER_SANITIZE})
  message(STATUS "ember: sanitizers ${EMBER_SANITIZE}")
endif()
