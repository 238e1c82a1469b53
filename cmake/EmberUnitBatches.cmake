# ember_add_batched_gtests(<target> BATCHES <n> ENVIRONMENT <VAR=value...>)
#
# Registers every GoogleTest case of <target> as its own ctest test, run in <n> batch processes:
# at each ctest start the generated include lists the cases (cached until the binary changes),
# clears the results folder and adds the tests `unit.batch<k>` (each runs a share of the cases and
# writes one result file per case, tests/unit/main.cpp) and one test per case that reports that
# case's result file. A case without one (its batch was not selected, as with `ctest -R`, or ended
# early in a crash) runs alone. LibTorch's start-up is then paid per batch, not per case.
# -DEMBER_UNIT_BATCHES=0 returns to one process per case (gtest_discover_tests).
set(EMBER_UNIT_BATCHES 4 CACHE STRING "Batch processes for the unit tests (0: one process per test)")

function(ember_add_batched_gtests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "BATCHES" "ENVIRONMENT")
  set(batches "${arg_BATCHES}")
  set(exe "$<TARGET_FILE:${target}>")
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${target}_batches")
  set(templates "${PROJECT_SOURCE_DIR}/cmake/unit_batches")
  set(environment "${arg_ENVIRONMENT}")
  set(workdir "${CMAKE_CURRENT_BINARY_DIR}")
  configure_file("${templates}/ctest_include.cmake.in" "${dir}/ctest_include.cmake.gen" @ONLY)
  file(GENERATE OUTPUT "${dir}/ctest_include.cmake" INPUT "${dir}/ctest_include.cmake.gen")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${dir}/ctest_include.cmake")
endfunction()
