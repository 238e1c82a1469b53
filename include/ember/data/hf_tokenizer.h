// A TextEncoder as the files of Hugging Face's `tokenizers` / transformers: tokenizer.json (a
// byte-level BPE: GPT-2's byte-to-character map, the pre-tokenisation regex as a Split, the ranks
// as vocab, merges recovered from the ranks, ignore_merges as tiktoken does) and
// tokenizer_config.json. Byte-level ember data (id = byte) is the same model with no merges. The
// result encodes text to the same ids as ember (tests/integration/hf.sh checks it).
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "ember/data/text_encoder.h"

namespace ember {

nlohmann::json hf_tokenizer_json(const TextEncoder& encoder);
nlohmann::json hf_tokenizer_config(const TextEncoder& encoder, int64_t max_length);

// GPT-2's printable stand-in (UTF-8) for a byte, as byte-level BPE vocabularies spell tokens.
std::string byte_level_char(unsigned char byte);
// The merges that build ranked tokens, in rank order: token r's last merge under tiktoken's BPE
// restricted to ranks below r (a token it cannot build from two lower-ranked parts has none).
std::vector<std::pair<std::string, std::string>> bpe_merges(const std::vector<std::string>& tokens_by_rank);

}  // namespace ember
