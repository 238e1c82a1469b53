// ember::log: levels, the prefix hook, file sinks, and the console format.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "ember/util/log.h"

namespace fs = std::filesystem;
namespace elog = ember::log;

namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ember_log_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    path_ = dir_ / "run" / "train.log";  // the sink creates the missing directories
    elog::set_level(elog::level::info);
    elog::set_prefix("");
  }
  void TearDown() override {
    elog::remove_file_sinks();
    elog::set_level(elog::level::info);
    elog::set_prefix("");
    fs::remove_all(dir_);
  }

  // The messages in the file, each checked for and stripped of its "[YYYY-mm-dd HH:MM:SS] " stamp.
  std::vector<std::string> file_messages() const {
    static const std::regex stamp(R"(^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] (.*)$)");
    std::vector<std::string> out;
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      EXPECT_TRUE(std::regex_match(line, m, stamp)) << "no time stamp: '" << line << "'";
      out.push_back(m.size() > 1 ? m[1].str() : line);
    }
    return out;
  }

  fs::path dir_, path_;
};

using Lines = std::vector<std::string>;

}  // namespace

TEST_F(LogTest, FileSinkReceivesEveryLevelWithItsTag) {
  elog::add_file_sink(path_, /*truncate=*/true);
  EXPECT_TRUE(fs::exists(path_));
  elog::info("step {:>4} | loss {:.2f}", 12, 3.14159);
  elog::warn("careful {}", "here");
  elog::error("bad {}", 42);
  elog::info_line("plain line");
  elog::warn_line("plain warning");
  elog::error_line("plain error");
  EXPECT_EQ(file_messages(), (Lines{"step   12 | loss 3.14", "warning: careful here", "error: bad 42", "plain line",
                                    "warning: plain warning", "error: plain error"}));
}

TEST_F(LogTest, LevelsFilter) {
  elog::add_file_sink(path_, true);
  EXPECT_EQ(elog::get_level(), elog::level::info);
  EXPECT_FALSE(elog::enabled(elog::level::debug));
  EXPECT_TRUE(elog::enabled(elog::level::info));
  elog::debug("hidden {}", 1);
  elog::debug_line("hidden too");
  elog::info("shown 1");
  elog::set_level(elog::level::debug);
  EXPECT_EQ(elog::get_level(), elog::level::debug);
  elog::debug("shown {}", 2);
  elog::set_level(elog::level::warn);
  elog::info("hidden {}", 3);
  elog::warn("shown {}", 3);
  elog::set_level(elog::level::error);
  elog::warn("hidden {}", 4);
  elog::error("shown {}", 4);
  elog::set_level(elog::level::off);
  EXPECT_FALSE(elog::enabled(elog::level::error));
  elog::error("hidden {}", 5);
  elog::write(elog::level::off, "never a message");
  EXPECT_EQ(file_messages(), (Lines{"shown 1", "debug: shown 2", "warning: shown 3", "error: shown 4"}));
}

TEST_F(LogTest, PrefixGoesBeforeTheLevelTag) {
  elog::add_file_sink(path_, true);
  EXPECT_EQ(elog::get_prefix(), "");
  elog::info("no prefix");
  elog::set_prefix("[rank 1] ");
  EXPECT_EQ(elog::get_prefix(), "[rank 1] ");
  elog::info("hello {}", "world");
  elog::warn("slow");
  elog::set_prefix("");
  elog::info("no prefix again");
  EXPECT_EQ(file_messages(), (Lines{"no prefix", "[rank 1] hello world", "[rank 1] warning: slow", "no prefix again"}));
}

TEST_F(LogTest, MessagesAreNotFormattedTwice) {
  elog::add_file_sink(path_, true);
  elog::info("{}", "{} and {0} stay as they are");
  elog::info_line("{not a field}");
  EXPECT_EQ(file_messages(), (Lines{"{} and {0} stay as they are", "{not a field}"}));
}

TEST_F(LogTest, RemovedSinksStopReceivingAndAppendIsTheDefault) {
  const fs::path other = dir_ / "other.log";
  elog::add_file_sink(path_, true);
  elog::add_file_sink(other, true);
  elog::info("both");
  elog::remove_file_sink(other);
  elog::info("first only");
  elog::remove_file_sinks();
  elog::info("neither");
  elog::add_file_sink(path_);  // appends
  elog::info("appended");
  EXPECT_EQ(file_messages(), (Lines{"both", "first only", "appended"}));
  std::ifstream in(other);
  std::string line, all;
  while (std::getline(in, line)) all += line + "\n";
  EXPECT_NE(all.find("] both\n"), std::string::npos) << all;
  EXPECT_EQ(all.find("first only"), std::string::npos) << all;
}

TEST_F(LogTest, UnopenableFileThrows) {
  std::ofstream(dir_.string() + ".blocker") << "x";  // a file where a directory would be needed
  const fs::path bad = fs::path(dir_.string() + ".blocker") / "train.log";
  EXPECT_THROW(elog::add_file_sink(bad), std::runtime_error);
  fs::remove(dir_.string() + ".blocker");
}

TEST_F(LogTest, ConsoleFormatIsTimeThenMessageOnStderr) {
  ::testing::internal::CaptureStderr();
  elog::info("console {}", 1);
  elog::set_prefix("[rank 3] ");
  elog::warn("console {}", 2);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(std::regex_match(
      err, std::regex(R"(\[\d{2}:\d{2}:\d{2}\] console 1\n\[\d{2}:\d{2}:\d{2}\] \[rank 3\] warning: console 2\n)")))
      << err;
}
