// Logging: "[HH:MM:SS] message" on stderr ("warning: " / "error: " / "debug: " after the time for
// those levels), optionally mirrored to files such as the run directory's train.log.
//
// The backend is Debian's spdlog 1.10, which is compiled against Debian's fmt 9 and does not
// compile against the torch wheel's fmt 12 headers (they come first on ember's include path). So
// src/util/log.cpp is built as its own library, ember_log, that sees neither the torch include
// directories nor FMT_HEADER_ONLY, and this header keeps spdlog out of every other translation
// unit: the templates below format with whatever fmt the caller sees (fmt 12, header-only) into a
// std::string and hand it to the non-template functions. fmt's versioned inline namespaces
// (fmt::v12 vs fmt::v9) keep the two copies of fmt apart. See docs/platform.md.
#pragma once
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <utility>

namespace ember::log {

enum class level { debug, info, warn, error, off };

// Messages below this level are dropped (console and files). Default: info.
void set_level(level l);
level get_level();
bool enabled(level l);

// Text put in front of every message, after the time stamp (e.g. "[rank 1] "). Default: empty.
void set_prefix(std::string prefix);
std::string get_prefix();

// Also write every message to `path` (appending unless `truncate`; parent directories are
// created), with the date in the time stamp: "[YYYY-mm-dd HH:MM:SS] message". Each line is
// flushed. Throws std::runtime_error when the file cannot be opened.
void add_file_sink(const std::filesystem::path& path, bool truncate = false);
// Stop writing to `path` (as given to add_file_sink) / to all files; closes them.
void remove_file_sink(const std::filesystem::path& path);
void remove_file_sinks();
void flush();

// One already formatted message (no fmt processing: braces are printed as they are).
void write(level l, const std::string& msg);
inline void debug_line(const std::string& msg) { write(level::debug, msg); }
inline void info_line(const std::string& msg) { write(level::info, msg); }
inline void warn_line(const std::string& msg) { write(level::warn, msg); }
inline void error_line(const std::string& msg) { write(level::error, msg); }

template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(level::debug)) write(level::debug, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(level::info)) write(level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(level::warn)) write(level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(level::error)) write(level::error, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace ember::log
