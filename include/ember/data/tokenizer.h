// Byte-level BPE tokenizer over tiktoken-format rank files (`base64(token bytes) rank` per line),
// a pre-tokenisation regex and special tokens. One engine serves the published vocabularies
// (r50k_base, cl100k_base, o200k_base, llama3) and the ones `ember tokenizer train` writes.
//   encode: regex pieces -> for each piece, merge the adjacent pair of lowest rank until none
//           remains in the rank table (tiktoken's byte-pair merge); decode: concatenate bytes.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ember/data/pretokenizer.h"

namespace ember {

struct TokenizerSpec {
  std::string name;  // preset name or the rank file's stem
  std::filesystem::path ranks_file;
  std::string pattern;                       // pre-tokenisation regex (PCRE2 syntax)
  std::map<std::string, uint32_t> specials;  // special token text -> id
  int64_t n_vocab = 0;                       // 0: max(id) + 1
};

class Tokenizer {
 public:
  explicit Tokenizer(const TokenizerSpec& spec);  // throws DataError naming file and line
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // Ordinary text: special-token strings are encoded as text. Thread-safe.
  std::vector<uint32_t> encode(std::string_view text) const;
  // Like encode, but occurrences of special-token strings become their ids.
  std::vector<uint32_t> encode_with_specials(std::string_view text) const;
  void encode_append(std::string_view text, std::vector<uint32_t>& out) const;
  // Throws DataError for an id outside the vocabulary.
  std::string decode(const std::vector<uint32_t>& ids) const;

  int64_t vocab_size() const { return vocab_size_; }
  size_t num_ranks() const { return id_to_bytes_.size(); }
  const std::string& name() const { return spec_.name; }
  const std::string& pattern() const { return spec_.pattern; }
  const std::map<std::string, uint32_t>& specials() const { return spec_.specials; }
  std::string hash() const { return hash_; }  // sha256 of rank file bytes, pattern and specials
  // Special id of the document separator (<|endoftext|>, <|end_of_text|>), if any.
  bool document_separator(uint32_t& id) const;

 private:
  void load_ranks(const std::filesystem::path& file);
  void encode_piece(std::string_view piece, std::vector<uint32_t>& out) const;
  void merge_pairs(std::string_view piece, std::vector<uint32_t>& out) const;
  void merge_pairs_long(std::string_view piece, std::vector<uint32_t>& out) const;
  uint32_t rank_of(std::string_view bytes) const;

  TokenizerSpec spec_;
  PreTokenizer pre_;
  std::string arena_;                                     // all token bytes, back to back
  std::vector<std::string_view> id_to_bytes_;             // rank -> bytes (into arena_)
  std::unordered_map<std::string_view, uint32_t> ranks_;  // bytes -> rank
  uint32_t byte_rank_[256];
  int64_t vocab_size_ = 0;
  std::string hash_;
  uint64_t instance_id_ = 0;  // keys the per-thread piece cache
};

// Reads a rank file into (bytes, rank) pairs; throws DataError naming the file and line.
std::vector<std::pair<std::string, uint32_t>> read_rank_file(const std::filesystem::path& file);
// Writes ranks as a tiktoken rank file, atomically.
void write_rank_file(const std::filesystem::path& file, const std::vector<std::string>& tokens);

}  // namespace ember
