#include "ember/util/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace ember::log {
namespace {

void emit(const char* tag, const std::string& msg) {
  static std::mutex mu;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[16];
  std::strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "[%s] %s%s\n", stamp, tag, msg.c_str());
  std::fflush(stderr);
}

}  // namespace

void info_line(const std::string& msg) { emit("", msg); }
void warn_line(const std::string& msg) { emit("warning: ", msg); }

}  // namespace ember::log
