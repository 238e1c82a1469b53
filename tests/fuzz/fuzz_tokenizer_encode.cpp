// The tokenizer's encode on any bytes (text corpora are not always valid UTF-8): with the
// published cl100k_base and o200k_base vocabularies (third_party/tokenizers), decode(encode(x))
// must give x back byte for byte, with and without special tokens.
#include <cstdlib>
#include <memory>

#include "ember/data/tokenizer.h"
#include "ember/data/tokenizer_presets.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

std::vector<std::unique_ptr<ember::Tokenizer>>& tokenizers() {
  static std::vector<std::unique_ptr<ember::Tokenizer>> all;
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
#ifdef EMBER_FUZZ_TOKENIZER_DATA
  setenv("EMBER_TOKENIZER_DIR", EMBER_FUZZ_TOKENIZER_DATA, /*overwrite=*/0);
#endif
  for (const char* name : {"cl100k_base", "o200k_base"})
    tokenizers().push_back(std::make_unique<ember::Tokenizer>(ember::tokenizer_preset(name)));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = ember::fuzz::as_text(data, size);
  for (const auto& tok : tokenizers()) {
    const std::vector<uint32_t> ids = tok->encode(text);
    for (uint32_t id : ids) ember::fuzz::require(id < tok->vocab_size(), "encode gives ids inside the vocabulary");
    ember::fuzz::require(tok->decode(ids) == text, "decode(encode(x)) == x");
    ember::fuzz::require(tok->decode(tok->encode_with_specials(text)) == text,
                         "decode(encode_with_specials(x)) == x");
  }
  return 0;
}
