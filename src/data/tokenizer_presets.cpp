#include "ember/data/tokenizer_presets.h"

#include <nlohmann/json.hpp>

#include "ember/data/tokenizer_search.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

const char* const kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const char* const kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Llama 3: 128,000 ranks, then 256 specials; the named ones sit among reserved_special_token_i.
std::map<std::string, uint32_t> llama3_specials() {
  const std::vector<std::string> named = {"<|begin_of_text|>",
                                          "<|end_of_text|>",
                                          "<|reserved_special_token_0|>",
                                          "<|reserved_special_token_1|>",
                                          "<|reserved_special_token_2|>",
                                          "<|reserved_special_token_3|>",
                                          "<|start_header_id|>",
                                          "<|end_header_id|>",
                                          "<|reserved_special_token_4|>",
                                          "<|eot_id|>"};
  std::map<std::string, uint32_t> s;
  uint32_t id = 128000;
  for (const auto& n : named) s[n] = id++;
  for (int i = 5; id < 128256; ++i) s["<|reserved_special_token_" + std::to_string(i) + "|>"] = id++;
  return s;
}

TokenizerSpec builtin(const std::string& name) {
  TokenizerSpec s;
  s.name = name;
  if (name == "r50k_base" || name == "p50k_base") {
    s.pattern = kGpt2Pattern;
    s.specials = {{"<|endoftext|>", 50256}};
    s.n_vocab = name == "r50k_base" ? 50257 : 50281;
  } else if (name == "cl100k_base") {
    s.pattern = kCl100kPattern;
    s.specials = {{"<|endoftext|>", 100257},
                  {"<|fim_prefix|>", 100258},
                  {"<|fim_middle|>", 100259},
                  {"<|fim_suffix|>", 100260},
                  {"<|endofprompt|>", 100276}};
  } else if (name == "o200k_base") {
    s.pattern = kO200kPattern;
    s.specials = {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}};
  } else if (name == "llama3") {
    s.pattern = kCl100kPattern;
    s.specials = llama3_specials();
    s.n_vocab = 128256;
  } else {
    std::string names;
    for (const auto& n : tokenizer_preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw UsageError("tokenizer: unknown preset '" + name + "' (expected one of " + names + ", or a rank file path)");
  }
  return s;
}

}  // namespace

std::vector<std::string> tokenizer_preset_names() {
  return {"r50k_base", "p50k_base", "cl100k_base", "o200k_base", "llama3"};
}

TokenizerSpec tokenizer_preset(const std::string& name) {
  TokenizerSpec s = builtin(name);
  s.ranks_file = find_tokenizer_file(name + ".tiktoken", tokenizer_search_dirs(tokenizer_search_env()),
                                     "tokenizer: preset '" + name + "'");
  return s;
}

TokenizerSpec resolve_tokenizer(const std::string& preset_or_file) {
  const auto names = tokenizer_preset_names();
  if (std::find(names.begin(), names.end(), preset_or_file) != names.end()) return tokenizer_preset(preset_or_file);
  const std::filesystem::path file(preset_or_file);
  if (!std::filesystem::is_regular_file(file)) builtin(preset_or_file);  // throws: unknown preset
  TokenizerSpec s;
  s.name = file.stem().string();
  s.ranks_file = file;
  s.pattern = kGpt2Pattern;
  const std::filesystem::path sidecar = file.string() + ".json";
  if (std::filesystem::is_regular_file(sidecar)) {
    try {
      const auto j = nlohmann::json::parse(read_text_file(sidecar));
      s.pattern = j.value("pat_str", s.pattern);
      const auto specials = j.value("special_tokens", nlohmann::json::object());
      for (const auto& [k, v] : specials.items()) s.specials[k] = v.get<uint32_t>();
      s.n_vocab = j.value("n_vocab", int64_t(0));
    } catch (const nlohmann::json::exception& e) {
      throw DataError("tokenizer: " + sidecar.string() + ": " + e.what());
    }
  } else {
    s.specials = {{"<|endoftext|>", static_cast<uint32_t>(read_rank_file(file).size())}};
  }
  return s;
}

}  // namespace ember
