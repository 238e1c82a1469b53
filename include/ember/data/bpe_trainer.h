// Training a byte-level BPE: pre-tokenise the corpus with GPT-2's regex, count the pieces, then
// repeatedly merge the most frequent adjacent token pair (ties: the smaller pair of ids) until the
// vocabulary is full. Ranks 0-255 are the bytes, rank 256 + k is the k-th merge; the last id is
// <|endoftext|>. Deterministic: the result depends only on the corpus bytes and the options.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

struct BpeTrainOptions {
  std::vector<std::string> inputs;                                // files or directories
  std::vector<std::string> extensions = {".txt", ".rst", ".md"};  // taken from directories
  int64_t vocab_size = 8192;                                      // ranks + the one special token
  std::string pattern;                                            // empty: GPT-2's
  bool progress = true;
};

struct BpeTrainResult {
  std::vector<std::string> tokens;  // rank -> bytes
  std::string pattern;
  int64_t corpus_bytes = 0, unique_pieces = 0;
};

BpeTrainResult train_bpe(const BpeTrainOptions& opt);
// Trains on in-memory text (tests); `progress` is ignored.
BpeTrainResult train_bpe_on_text(const std::vector<std::string>& texts, const BpeTrainOptions& opt);
// Writes <file> (tiktoken ranks) and <file>.json ({"pat_str", "special_tokens"}).
void save_trained_tokenizer(const BpeTrainResult& result, const std::filesystem::path& file);

}  // namespace ember
