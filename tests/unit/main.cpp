// The unit tests' main: GoogleTest's, plus one result file per test when $EMBER_UNIT_RESULTS names a
// folder. ctest runs the tests in a few batch processes (cmake/EmberUnitBatches.cmake) and reports
// each test from its file, so LibTorch's start-up (~0.3-0.4 s of operator registration per process)
// is paid once per batch instead of once per test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

// Writes <folder>/<Suite.Name>.result when a test ends: its verdict on the first line ("passed",
// "failed" or "skipped"), then each failure's file, line and message. A test that crashes the
// process leaves no file, and ctest's check then runs that test alone.
class ResultFiles : public testing::EmptyTestEventListener {
 public:
  explicit ResultFiles(std::filesystem::path folder) : folder_(std::move(folder)) {}

  void OnTestEnd(const testing::TestInfo& info) override {
    const testing::TestResult& result = *info.result();
    const std::string name = std::string(info.test_suite_name()) + "." + info.name();
    const auto path = folder_ / (name + ".result");
    std::ofstream out(path.string() + ".part");
    out << verdict(result) << '\n';
    for (int i = 0; i < result.total_part_count(); ++i) {
      const testing::TestPartResult& part = result.GetTestPartResult(i);
      if (!part.failed() && !part.skipped()) continue;
      out << (part.file_name() ? part.file_name() : "unknown file") << ':' << part.line_number() << ": "
          << part.message() << '\n';
    }
    out.close();
    std::filesystem::rename(path.string() + ".part", path);  // a file is whole or absent
  }

 private:
  static const char* verdict(const testing::TestResult& result) {
    if (result.Failed()) return "failed";
    if (result.Skipped()) return "skipped";
    return "passed";
  }

  std::filesystem::path folder_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (const char* folder = std::getenv("EMBER_UNIT_RESULTS"); folder && *folder) {
    std::filesystem::create_directories(folder);
    testing::UnitTest::GetInstance()->listeners().Append(new ResultFiles(folder));
  }
  return RUN_ALL_TESTS();
}
