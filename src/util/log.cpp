// The only translation unit that sees spdlog. Built as the ember_log library against Debian's
// spdlog 1.10 + fmt 9 (shared libraries), without the torch include directories: see log.h.
#include "ember/util/log.h"

#include <spdlog/logger.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace ember::log {
namespace {

constexpr const char* kConsolePattern = "[%H:%M:%S] %v";
constexpr const char* kFilePattern = "[%Y-%m-%d %H:%M:%S] %v";

spdlog::level::level_enum to_spdlog(level l) {
  switch (l) {
    case level::debug: return spdlog::level::debug;
    case level::info: return spdlog::level::info;
    case level::warn: return spdlog::level::warn;
    case level::error: return spdlog::level::err;
    case level::off: break;
  }
  return spdlog::level::off;
}

const char* tag(level l) {
  switch (l) {
    case level::debug: return "debug: ";
    case level::warn: return "warning: ";
    case level::error: return "error: ";
    default: return "";
  }
}

struct State {
  // Files come and go at run time; dist_sink adds and removes them under its own lock.
  std::shared_ptr<spdlog::sinks::dist_sink_mt> files = std::make_shared<spdlog::sinks::dist_sink_mt>();
  std::shared_ptr<spdlog::logger> logger;
  std::mutex mu;  // guards prefix and file_sinks
  std::string prefix;
  std::vector<std::pair<std::filesystem::path, std::shared_ptr<spdlog::sinks::sink>>> file_sinks;

  State() {
    auto console = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    console->set_pattern(kConsolePattern);
    // Not registered with spdlog's global registry: ember's logger is private to this file.
    logger = std::make_shared<spdlog::logger>("ember", spdlog::sinks_init_list{console, files});
    logger->set_level(spdlog::level::info);
    logger->flush_on(spdlog::level::trace);  // every line reaches the console and the files
  }
};

// Never destroyed, so that logging from static destructors stays safe; the files are flushed
// after every line.
State& state() {
  static State* s = new State();
  return *s;
}

}  // namespace

void set_level(level l) { state().logger->set_level(to_spdlog(l)); }

level get_level() {
  switch (state().logger->level()) {
    case spdlog::level::trace:
    case spdlog::level::debug: return level::debug;
    case spdlog::level::info: return level::info;
    case spdlog::level::warn: return level::warn;
    case spdlog::level::err:
    case spdlog::level::critical: return level::error;
    default: return level::off;
  }
}

bool enabled(level l) { return l != level::off && state().logger->should_log(to_spdlog(l)); }

void set_prefix(std::string prefix) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.prefix = std::move(prefix);
}

std::string get_prefix() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.prefix;
}

void add_file_sink(const std::filesystem::path& path, bool truncate) {
  State& s = state();
  std::shared_ptr<spdlog::sinks::sink> sink;
  try {
    sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path.string(), truncate);
  } catch (const std::exception& e) {
    throw std::runtime_error("log: cannot open " + path.string() + ": " + e.what());
  }
  sink->set_pattern(kFilePattern);
  std::lock_guard<std::mutex> lock(s.mu);
  s.files->add_sink(sink);
  s.file_sinks.emplace_back(path, std::move(sink));
}

void remove_file_sink(const std::filesystem::path& path) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  for (auto it = s.file_sinks.begin(); it != s.file_sinks.end();) {
    if (it->first == path) {
      s.files->remove_sink(it->second);
      it = s.file_sinks.erase(it);
    } else {
      ++it;
    }
  }
}

void remove_file_sinks() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  for (auto& f : s.file_sinks) s.files->remove_sink(f.second);
  s.file_sinks.clear();
}

void flush() { state().logger->flush(); }

void write(level l, const std::string& msg) {
  if (l == level::off) return;
  State& s = state();
  const auto lvl = to_spdlog(l);
  if (!s.logger->should_log(lvl)) return;
  std::string line;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    line = s.prefix;
  }
  line += tag(l);
  line += msg;
  s.logger->log(lvl, spdlog::string_view_t(line));  // the string_view overload: no formatting
}

}  // namespace ember::log
