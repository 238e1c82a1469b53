// How plain text becomes token ids for a dataset: byte-level, or the BPE tokenizer its
// manifest.json names (a preset or a rank file, checked against the recorded sha256). Analyses of
// a run read text the way the run's data was prepared.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/data/tokenizer.h"

namespace ember {

class TextEncoder {
 public:
  static TextEncoder bytes();
  explicit TextEncoder(std::shared_ptr<const Tokenizer> bpe);
  // One document: its ids (ordinary text; special-token strings are encoded as text).
  std::vector<uint32_t> encode(std::string_view text) const;
  // The bytes of ids (byte-level: id = byte); DataError for an id outside the vocabulary.
  std::string decode(const std::vector<uint32_t>& ids) const;
  // The id that ends a document, if the encoder has one (bytes: 0; BPE: <|endoftext|> and kin).
  bool document_separator(uint32_t& id) const;
  std::string name() const;
  int64_t vocab_size() const;
  const Tokenizer* bpe() const { return bpe_.get(); }  // null: byte-level

 private:
  TextEncoder() = default;
  std::shared_ptr<const Tokenizer> bpe_;  // null: byte-level
};

// The encoder the shards of `specs` were prepared with, from the manifest.json in the directory
// of the first shard. A DataError naming `key` and what is missing when it cannot be found.
TextEncoder dataset_encoder(const std::vector<std::string>& specs, const std::string& key);
// The encoder a manifest.json describes.
TextEncoder manifest_encoder(const std::filesystem::path& manifest);
// A manifest.json's contents; DataError naming the file when it is not JSON.
nlohmann::json read_manifest(const std::filesystem::path& manifest);
// The encoder manifest contents `m` describe (at least its tokenizer keys); `manifest` names it in
// errors, and a tokenizer rank file not found as given is looked for beside it.
TextEncoder manifest_encoder(const nlohmann::json& m, const std::filesystem::path& manifest);
// The keys of a manifest that name its tokenizer (tokenizer, tokenizer_spec, tokenizer_sha256).
nlohmann::json manifest_tokenizer_keys(const nlohmann::json& m);

// What the manifest.json beside a dataset's first shard says about its tokenizer, without loading
// it; nullopt when the shards or the manifest cannot be found (nothing to compare).
struct DatasetTokenizer {
  std::string name;      // "bytes", a preset or a rank file
  std::string identity;  // the recorded sha256, else the name
  std::filesystem::path manifest;
};
std::optional<DatasetTokenizer> dataset_tokenizer(const std::vector<std::string>& specs, const std::string& key);
// What manifest contents `m` say about their tokenizer; nullopt when they name none.
std::optional<DatasetTokenizer> manifest_tokenizer(const nlohmann::json& m, const std::filesystem::path& manifest);
// A DataError when both datasets name their tokenizers and the two differ: ids of different
// tokenizers do not compare (a perplexity over them means nothing).
void require_same_tokenizer(const std::vector<std::string>& a, const std::string& a_key,
                            const std::vector<std::string>& b, const std::string& b_key);
// The same with the first side already known (a run's recorded tokenizer; nullopt: nothing to compare).
void require_same_tokenizer(const std::optional<DatasetTokenizer>& a, const std::string& a_key,
                            const std::vector<std::string>& b, const std::string& b_key);

// Whether a --data argument is a plain text file (not a shard, .npy or nanogpt: file).
bool is_text_input(const std::string& spec);
// `specs` with each plain text file encoded as one document into a shard under `scratch` (the
// encoder is asked for only when there is text); shard specs pass through unchanged.
std::vector<std::string> encode_text_inputs(const std::vector<std::string>& specs,
                                            const std::function<TextEncoder()>& encoder,
                                            const std::filesystem::path& scratch);

}  // namespace ember
