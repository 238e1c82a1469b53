// Named tokenizers: r50k_base (GPT-2), p50k_base, cl100k_base, o200k_base and llama3. Their
// regexes and special tokens are built in; the rank files (<name>.tiktoken) ship in
// third_party/tokenizers, installed as share/ember/tokenizers, and are found as
// data/tokenizer_search.h says ($EMBER_TOKENIZER_DIR first, the user cache last).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ember/data/tokenizer.h"

namespace ember {

// GPT-2's pre-tokenisation regex; also the one `ember tokenizer train` uses.
extern const char* const kGpt2Pattern;

std::vector<std::string> tokenizer_preset_names();
// The spec of a preset; throws UsageError for an unknown name and DataError (naming every folder
// looked in and how to fill one) when the rank file is missing.
TokenizerSpec tokenizer_preset(const std::string& name);
// A preset name, or a rank file path (a trained ember tokenizer: GPT-2 regex, <|endoftext|> after
// the last rank, unless a sidecar <file>.json gives "pat_str"/"special_tokens").
TokenizerSpec resolve_tokenizer(const std::string& preset_or_file);

}  // namespace ember
