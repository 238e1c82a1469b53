// Pre-tokenisation: splits text into pieces with a PCRE2 regex (UTF + UCP, JIT-compiled), the way
// tiktoken does before byte-pair merging. Bytes that are not valid UTF-8 never reach the regex:
// each invalid byte becomes a piece of its own, so any byte string splits without error and the
// pieces concatenate back to the input.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace ember {

class PreTokenizer {
 public:
  explicit PreTokenizer(const std::string& pattern);  // throws Error naming the offset on bad regex
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  // Calls on_piece for each piece of text, in order. Thread-safe.
  void split(std::string_view text, const std::function<void(std::string_view)>& on_piece) const;
  // Whether the pattern matches all of text (invalid UTF-8: never).
  bool full_match(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }

 private:
  void split_valid(std::string_view text, const std::function<void(std::string_view)>& on_piece) const;
  std::string pattern_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Length of the longest prefix of s that is valid UTF-8 (no overlongs, surrogates or > U+10FFFF).
size_t valid_utf8_prefix(std::string_view s);

}  // namespace ember
