#include "ember/data/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "ember/util/error.h"

namespace ember {

struct PreTokenizer::Impl {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Impl() { pcre2_code_free(code); }
};

namespace {

// Per-thread match data and JIT stack, sized for the longest tiktoken pattern.
struct MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_jit_stack* stack = nullptr;
  pcre2_match_context* context = nullptr;
  MatchState() {
    data = pcre2_match_data_create(4, nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    context = pcre2_match_context_create(nullptr);
    pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~MatchState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

// Length of the UTF-8 sequence starting at s[i] if it is valid there, else 0.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c == 0xE0)
    n = 3, lo = 0xA0;
  else if (c == 0xED)
    n = 3, hi = 0x9F;  // no surrogates
  else if (c >= 0xE1 && c <= 0xEF)
    n = 3;
  else if (c == 0xF0)
    n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3)
    n = 4;
  else if (c == 0xF4)
    n = 4, hi = 0x8F;
  else
    return 0;
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

size_t valid_utf8_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return i;
}

PreTokenizer::PreTokenizer(const std::string& pattern) : pattern_(pattern), impl_(new Impl) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP, &err,
                              &offset, nullptr);
  if (!impl_->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw Error("tokenizer: bad pre-tokenisation regex at offset " + std::to_string(offset) + ": " +
                reinterpret_cast<const char*>(msg));
  }
  impl_->jit = pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE) == 0;
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

void PreTokenizer::split(std::string_view text, const std::function<void(std::string_view)>& on_piece) const {
  while (!text.empty()) {
    const size_t valid = valid_utf8_prefix(text);
    if (valid > 0) split_valid(text.substr(0, valid), on_piece);
    if (valid == text.size()) break;
    on_piece(text.substr(valid, 1));  // one invalid byte: a piece of its own
    text.remove_prefix(valid + 1);
  }
}

bool PreTokenizer::full_match(std::string_view text) const {
  if (valid_utf8_prefix(text) != text.size()) return false;
  MatchState& st = match_state();
  const int rc = pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0,
                             PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_NO_UTF_CHECK, st.data, st.context);
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
    throw Error("tokenizer: regex match failed (PCRE2 error " + std::to_string(rc) + ")");
  return rc >= 0;
}

void PreTokenizer::split_valid(std::string_view text, const std::function<void(std::string_view)>& on_piece) const {
  MatchState& st = match_state();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    const int rc =
        impl_->jit ? pcre2_jit_match(impl_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, st.data, st.context)
                   : pcre2_match(impl_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, st.data, st.context);
    size_t start = text.size(), end = text.size();
    if (rc >= 0) {
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
      start = ov[0];
      end = ov[1];
    } else if (rc != PCRE2_ERROR_NOMATCH) {
      throw Error("tokenizer: regex match failed (PCRE2 error " + std::to_string(rc) + ")");
    }
    if (start > pos) on_piece(text.substr(pos, start - pos));  // text no alternative matched
    if (end == start) {                                        // empty match: step one character to make progress
      if (end >= text.size()) break;
      const size_t n = utf8_sequence_length(text, end);
      on_piece(text.substr(end, n));
      pos = end + n;
      continue;
    }
    on_piece(text.substr(start, end - start));
    pos = end;
  }
}

}  // namespace ember
