# Reports one unit test: cmake -DEXE=<binary> -DCASE=<Suite.Name> -DRESULT=<file> -P report_case.cmake.
# The result file, written by the test's batch (tests/unit/main.cpp), holds the verdict on its first
# line and the failures after it. Without one (the batch was not run, or crashed) the test runs alone.
if(NOT EXISTS "${RESULT}")
  execute_process(COMMAND "${EXE}" "--gtest_filter=${CASE}" --gtest_also_run_disabled_tests
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CASE} failed (exit ${rc})")
  endif()
  return()
endif()
file(READ "${RESULT}" text)
string(REGEX MATCH "^[a-z]+" verdict "${text}")
if(verdict STREQUAL "passed")
  message("[       OK ] ${CASE} (in its batch)")
elseif(verdict STREQUAL "skipped")
  message("[  SKIPPED ] ${CASE}\n${text}")
else()
  message(FATAL_ERROR "[  FAILED  ] ${CASE} (in its batch; its output is in the batch's log)\n${text}")
endif()
