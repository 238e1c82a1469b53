# One batch of unit tests: cmake -DEXE=<binary> -DFILTER=<A.x:B.y:...> -P run_batch.cmake, with
# $EMBER_UNIT_RESULTS naming the folder for the per-test result files. Each test reports its own
# verdict from its file, so the batch passes once its process ran to the end (GoogleTest exits 1 when
# a test failed); a crash fails it, and the tests it left without a file then run alone.
execute_process(COMMAND "${EXE}" "--gtest_filter=${FILTER}" --gtest_also_run_disabled_tests
                RESULT_VARIABLE rc)
if(rc EQUAL 1)
  message("some tests of this batch failed: ctest reports each one")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "the batch process ended early (${rc}): each test it left without a result "
          "runs alone when ctest reports it")
endif()
