// What every fuzz target shares (docs/building.md, "Fuzzing"): the input as a file (ember's
// parsers read paths, so the targets fuzz what the CLI calls), and the one rule they check
// besides the sanitizers: bad input ends in an ember::Error, whose message names the file; any
// other exception (a bare std::out_of_range, a c10::Error, bad_alloc) is a finding.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "ember/util/error.h"

namespace ember::fuzz {

// A folder of this process's own under the temporary directory, removed at exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("ember-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] { std::error_code ec; std::filesystem::remove_all(scratch_dir(), ec); });
    return d;
  }();
  return dir;
}

// Writes bytes to scratch_dir()/name and returns its path.
inline std::filesystem::path input_file(const std::string& name, std::string_view bytes) {
  const auto path = scratch_dir() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

// A property of the parsed result that must hold for every input (a round trip, a bound).
inline void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: property violated: %s\n", what);
  std::abort();
}

// Runs body; an ember::Error is the expected answer to a bad input, anything else aborts (and
// libFuzzer keeps the input as a crash). EMBER_FUZZ_VERBOSE=1 prints each refusal, to see which
// seeds reach past the first check.
template <class Body>
void expect_clean_errors(Body&& body) {
  try {
    body();
  } catch (const ember::Error& e) {
    static const bool verbose = std::getenv("EMBER_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception that is not an ember::Error escaped: %s\n", e.what());
    std::abort();
  }
}

// Splits the input at its first line that is exactly `marker`: {before, after} (after empty when
// the marker is absent).
inline std::pair<std::string_view, std::string_view> split_at_marker(std::string_view in, std::string_view marker) {
  size_t at = 0;
  while (at <= in.size()) {
    size_t end = in.find('\n', at);
    if (end == std::string_view::npos) end = in.size();
    if (in.substr(at, end - at) == marker) return {in.substr(0, at), in.substr(std::min(end + 1, in.size()))};
    at = end + 1;
  }
  return {in, {}};
}

inline std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    out.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace ember::fuzz
