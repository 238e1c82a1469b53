#include "ember/data/hf_tokenizer.h"

#include <limits>
#include <unordered_map>

#include "ember/util/error.h"

namespace ember {

std::string byte_level_char(unsigned char byte) {
  // GPT-2: printable Latin-1 bytes stand for themselves; the others map to 256, 257, ... in order.
  const auto printable = [](int b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174); };
  int code = byte;
  if (!printable(byte)) {
    code = 256;
    for (int b = 0; b < byte; ++b) code += printable(b) ? 0 : 1;
  }
  std::string utf8;
  if (code < 0x80) {
    utf8.push_back(static_cast<char>(code));
  } else {  // every stand-in is below U+0800: two bytes
    utf8.push_back(static_cast<char>(0xC0 | (code >> 6)));
    utf8.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
  return utf8;
}

namespace {

std::string byte_level(const std::string& bytes) {
  std::string out;
  for (const unsigned char b : bytes) out += byte_level_char(b);
  return out;
}

// tiktoken's merge loop on `bytes`, using only ranks below max_rank: the parts it ends with.
std::vector<std::string> merge_below(const std::string& bytes, uint32_t max_rank,
                                     const std::unordered_map<std::string, uint32_t>& ranks) {
  std::vector<std::string> parts;
  for (const char b : bytes) parts.emplace_back(1, b);
  while (parts.size() > 1) {
    uint32_t best = std::numeric_limits<uint32_t>::max();
    size_t at = 0;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      auto it = ranks.find(parts[i] + parts[i + 1]);
      if (it != ranks.end() && it->second < max_rank && it->second < best) {
        best = it->second;
        at = i;
      }
    }
    if (best == std::numeric_limits<uint32_t>::max()) break;
    parts[at] += parts[at + 1];
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  return parts;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> bpe_merges(const std::vector<std::string>& tokens_by_rank) {
  std::unordered_map<std::string, uint32_t> ranks;
  for (uint32_t r = 0; r < tokens_by_rank.size(); ++r) ranks.emplace(tokens_by_rank[r], r);
  std::vector<std::pair<std::string, std::string>> merges;
  for (uint32_t r = 0; r < tokens_by_rank.size(); ++r) {
    if (tokens_by_rank[r].size() < 2) continue;
    auto parts = merge_below(tokens_by_rank[r], r, ranks);
    if (parts.size() == 2) merges.emplace_back(std::move(parts[0]), std::move(parts[1]));
  }
  return merges;
}

namespace {

nlohmann::json added_token(const std::string& text, uint32_t id) {
  return {{"id", id},         {"content", text},     {"single_word", false}, {"lstrip", false},
          {"rstrip", false},  {"normalized", false}, {"special", true}};
}

// The bytes of rank `id`; empty for an unused rank or a special token's id.
std::string ranked_bytes(const Tokenizer& bpe, uint32_t id) {
  for (const auto& [text, special] : bpe.specials())
    if (special == id) return {};
  try {
    return bpe.decode({id});
  } catch (const DataError&) {
    return {};
  }
}

nlohmann::json byte_level_step(bool use_regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", use_regex}};
}

}  // namespace

nlohmann::json hf_tokenizer_json(const TextEncoder& encoder) {
  std::vector<std::string> tokens;
  nlohmann::json added = nlohmann::json::array();
  nlohmann::json pre = byte_level_step(false);
  if (const Tokenizer* bpe = encoder.bpe()) {
    for (const auto& [text, id] : bpe->specials()) added.push_back(added_token(text, id));
    for (uint32_t id = 0; id < bpe->num_ranks(); ++id) tokens.push_back(ranked_bytes(*bpe, id));
    pre = {{"type", "Sequence"},
           {"pretokenizers",
            {{{"type", "Split"}, {"pattern", {{"Regex", bpe->pattern()}}}, {"behavior", "Isolated"}, {"invert", false}},
             byte_level_step(false)}}};
  } else {
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  }
  nlohmann::json vocab = nlohmann::json::object();
  for (uint32_t id = 0; id < tokens.size(); ++id)
    if (!tokens[id].empty()) vocab[byte_level(tokens[id])] = id;  // empty: an unused rank
  for (const auto& token : added) vocab[token["content"].get<std::string>()] = token["id"];
  nlohmann::json merges = nlohmann::json::array();
  for (const auto& [a, b] : bpe_merges(tokens)) merges.push_back({byte_level(a), byte_level(b)});
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", added},
          {"normalizer", nullptr},
          {"pre_tokenizer", pre},
          {"post_processor", nullptr},
          {"decoder", byte_level_step(true)},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", nullptr},
            {"continuing_subword_prefix", nullptr},
            {"end_of_word_suffix", nullptr},
            {"fuse_unk", false},
            {"byte_fallback", false},
            {"ignore_merges", true},  // a piece that is a whole token stays one, as in tiktoken
            {"vocab", vocab},
            {"merges", merges}}}};
}

nlohmann::json hf_tokenizer_config(const TextEncoder& encoder, int64_t max_length) {
  nlohmann::json c = {{"tokenizer_class", "PreTrainedTokenizerFast"},
                      {"model_max_length", max_length},
                      {"clean_up_tokenization_spaces", false}};
  uint32_t eos = 0;
  if (encoder.bpe() && encoder.document_separator(eos))
    for (const auto& [text, id] : encoder.bpe()->specials())
      if (id == eos) c["eos_token"] = text;
  return c;
}

}  // namespace ember
