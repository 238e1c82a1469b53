// Named tokenizers: r50k_base (GPT-2), p50k_base, cl100k_base, o200k_base and llama3. Their
// regexes and special tokens are built in; the rank files (<name>.tiktoken) live in the
// tokenizer cache: $EMBER_TOKENIZER_DIR, else ~/.cache/ember/tokenizers (scripts/setup.sh fills it).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ember/data/tokenizer.h"

namespace ember {

// GPT-2's pre-tokenisation regex; also the one `ember tokenizer train` uses.
extern const char* const kGpt2Pattern;

std::vector<std::string> tokenizer_preset_names();
std::filesystem::path tokenizer_cache_dir();
// The spec of a preset; throws UsageError for an unknown name and DataError (naming the expected
// path and how to fill it) when the rank file is missing.
TokenizerSpec tokenizer_preset(const std::string& name);
// A preset name, or a rank file path (a trained ember tokenizer: GPT-2 regex, <|endoftext|> after
// the last rank, unless a sidecar <file>.json gives "pat_str"/"special_tokens").
TokenizerSpec resolve_tokenizer(const std::string& preset_or_file);

}  // namespace ember
