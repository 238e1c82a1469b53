# ctest's unit-test batches (cmake/EmberUnitBatches.cmake) report each test as it ran: on
# ember_batch_selftest, a batch's pass, skip, failure and crash each reach the right test, a test
# without a result file (its batch crashed, or was not run) runs alone, and the listing names every
# case. A wrong verdict here would hide a unit test's failure in the suite.
source "$(dirname "$0")/lib_common.sh"
BIN="$EMBER_BUILD_DIR/tests/ember_batch_selftest"
TEMPLATES="$EMBER_SOURCE_DIR/cmake/unit_batches"
[ -x "$BIN" ] || fail "$BIN is missing (built with the tests)"
CASES="Selftest.Passes:Selftest.Skips:Selftest.FailsWhenAsked:Selftest.CrashesWhenAsked:Selftest.RunsAfterTheCrash"
batch() {  # results-folder -> the batch's exit status
  EMBER_UNIT_RESULTS="$PWD/$1" cmake -DEXE="$BIN" -DFILTER="$CASES" -P "$TEMPLATES/run_batch.cmake" >"$1.log" 2>&1
}
report() {  # results-folder case -> the report's exit status; its output in report.out
  cmake -DEXE="$BIN" -DCASE="$2" -DRESULT="$PWD/$1/$2.result" -P "$TEMPLATES/report_case.cmake" >report.out 2>&1
}
batch clean || { cat clean.log >&2; fail "a batch of passing tests failed"; }
for c in Passes FailsWhenAsked CrashesWhenAsked RunsAfterTheCrash; do
  report clean "Selftest.$c" || { cat report.out >&2; fail "Selftest.$c passed in its batch but not in its report"; }
  grep -q "(in its batch)" report.out || fail "Selftest.$c's report did not read its batch's result"
done
report clean Selftest.Skips || fail "a skipped test's report failed"
grep -q '\[  SKIPPED \]' report.out || fail "a skipped test is not reported as skipped (ctest's SKIP_REGULAR_EXPRESSION)"

EMBER_SELFTEST_FAIL=1 batch failing || { cat failing.log >&2; fail "a batch that ran to the end with a failure failed itself"; }
if EMBER_SELFTEST_FAIL=1 report failing Selftest.FailsWhenAsked; then fail "a failed test was reported as passed"; fi
grep -q "failed on purpose" report.out || { cat report.out >&2; fail "the failure's message is not in the report"; }
report failing Selftest.Passes || fail "a passing test beside a failure was reported as failed"

if EMBER_SELFTEST_CRASH=1 batch crashing; then fail "a batch whose process crashed passed"; fi
[ -f crashing/Selftest.Passes.result ] || fail "the tests before the crash have no result"
[ ! -f crashing/Selftest.RunsAfterTheCrash.result ] || fail "a test after the crash has a result"
report crashing Selftest.RunsAfterTheCrash || { cat report.out >&2; fail "a test the crash left behind did not run alone"; }
if EMBER_SELFTEST_CRASH=1 report crashing Selftest.CrashesWhenAsked; then fail "the crashing test, run alone, passed"; fi
report never-run Selftest.Passes || fail "a test whose batch never ran did not run alone"

cat >list.cmake <<CMAKE
include("$TEMPLATES/list_cases.cmake")
ember_list_gtest_cases("$BIN" "$PWD/cases.txt" cases)
message("\${cases}")
CMAKE
listed=$(cmake -P list.cmake 2>&1)
[ "$listed" = "${CASES//:/;}" ] || fail "the listing gave '$listed', not the binary's cases"
echo "unit batches: pass, skip, failure, crash and a missing result each reported as they ran"
