// Child processes of a sweep (experiment/child_process.h): exit codes, output files, the signal
// mask a child starts with (spawn_child blocks SIGINT / SIGTERM around the start, the child must
// not inherit that), and signal_children reaching a running child.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>

#include "ember/experiment/child_process.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace fs = std::filesystem;

TEST(ChildProcess, ExitCodeAndOutputFile) {
  const fs::path out = fs::temp_directory_path() / "ember_child_out.txt";
  fs::remove(out);
  EXPECT_EQ(ember::run_child({"/bin/sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"}, out.string()), 3);
  const auto text = ember::read_text_file(out);
  EXPECT_NE(text.find("to-stdout"), std::string::npos) << text;
  EXPECT_NE(text.find("to-stderr"), std::string::npos) << text;
  EXPECT_THROW(ember::run_child({"/nonexistent/ember_no_such_program"}), ember::Error);
}

TEST(ChildProcess, ChildStartsWithTheCallersSignalMask) {
  const fs::path out = fs::temp_directory_path() / "ember_child_mask.txt";
  ASSERT_EQ(ember::run_child({"/bin/grep", "SigBlk", "/proc/self/status"}, "", out.string()), 0);
  const auto line = ember::read_text_file(out);  // "SigBlk:\t<hex mask>"
  const auto mask = std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
  EXPECT_EQ(mask & (1ull << (SIGINT - 1)), 0u) << line;
  EXPECT_EQ(mask & (1ull << (SIGTERM - 1)), 0u) << line;
}

TEST(ChildProcess, SignalChildrenReachesARunningChild) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ember::spawn_child({"/bin/sleep", "30"});
  ember::signal_children(SIGTERM);
  EXPECT_EQ(ember::wait_child(pid), 128 + SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}
