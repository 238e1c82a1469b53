// Console logging: "[HH:MM:SS] message" on stderr. A small wrapper over fmt instead of spdlog:
// the torch wheel puts its own fmt (12.x) first on the include path, which Debian's spdlog 1.10
// (built for fmt 9) cannot compile against. fmt is used header-only, so either version works.
#pragma once
#include <fmt/format.h>

#include <string>
#include <utility>

namespace ember::log {

void info_line(const std::string& msg);
void warn_line(const std::string& msg);

template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  info_line(fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  warn_line(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace ember::log
