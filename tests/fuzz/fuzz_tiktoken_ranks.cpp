// tiktoken rank files (`base64(bytes) rank` per line), as `--tokenizer FILE` and presets read
// them: the reader, then a tokenizer built on the file. A file it accepts has every byte as a
// token, so the tokenizer must encode any text and decode it back, without an error.
#include <optional>

#include "ember/data/tokenizer.h"
#include "ember/data/tokenizer_presets.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  const auto file = fuzz::input_file("input.tiktoken", fuzz::as_text(data, size));
  fuzz::expect_clean_errors([&] { read_rank_file(file); });
  std::optional<Tokenizer> tok;
  fuzz::expect_clean_errors([&] {
    TokenizerSpec spec;
    spec.name = "fuzz";
    spec.ranks_file = file;
    spec.pattern = kGpt2Pattern;
    tok.emplace(spec);
  });
  if (!tok) return 0;
  // ASCII, UTF-8 and a lone invalid byte.
  const std::string text = "Hello, world! 123 \xc3\xa9t\xc3\xa9 \xe4\xb8\xad\xff";
  const std::vector<uint32_t> ids = tok->encode(text);
  for (uint32_t id : ids) fuzz::require(id < tok->vocab_size(), "encode gives ids inside the vocabulary");
  fuzz::require(tok->decode(ids) == text, "decode(encode(text)) == text");
  return 0;
}
