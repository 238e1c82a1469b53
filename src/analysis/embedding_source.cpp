#include "ember/analysis/embedding_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ember/run/model_loader.h"
#include "ember/io/npy.h"
#include "ember/io/safetensors.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace {

// Input embeddings of common checkpoints, most specific first.
const std::vector<std::string> kKnownNames = {
    "model.embed_tokens.weight",                 // Llama, Mistral, Qwen, Gemma, Phi-2/3
    "transformer.wte.weight",                    // GPT-2 (transformers), GPT-J, Falcon
    "wte.weight",                                // GPT-2 (hub safetensors)
    "model.language_model.embed_tokens.weight",  // Gemma 3 multimodal
    "language_model.model.embed_tokens.weight",  // Llava-style multimodal
    "gpt_neox.embed_in.weight",                  // Pythia, GPT-NeoX
    "transformer.word_embeddings.weight",        // Bloom
    "model.decoder.embed_tokens.weight",         // OPT
    "transformer.embd.wte.weight",               // Phi-1
    "tok_embeddings.weight",                     // Meta's original Llama
    "embed_tokens.weight",
    "embedding.weight",  // ember's own model.safetensors
};
const std::vector<std::string> kKnownSuffixes = {"embed_tokens.weight", "wte.weight", "word_embeddings.weight",
                                                 "embed_in.weight", "tok_embeddings.weight"};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// docs/capacity.md bookkeeping needs to know whether the head has its own V x d matrix:
// lm_head (transformers), embed_out (GPT-NeoX), output (Meta's Llama), head (ember).
HeadTying head_of(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (ends_with(n, "lm_head.weight") || n == "embed_out.weight" || n == "output.weight" || n == "head.weight")
      return HeadTying::untied;
  return HeadTying::tied;
}

// ember's model.safetensors of a generated input embedding (lev, albert, ...) has no table.
bool is_ember_generated(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (n.rfind("embedding.", 0) == 0 && n != "embedding.weight") return true;
  return false;
}

bool is_ember_dir(const fs::path& p) {
  return fs::exists(p / "config.yaml") || fs::exists(p / "state.json") || fs::exists(p / "SHA256SUMS");
}

EmbeddingMatrix from_ember(const fs::path& dir, const std::string& tensor) {
  auto loaded = load_trained_model(dir);
  EmbeddingMatrix out;
  out.format = "ember";
  if (tensor.empty()) {
    out.matrix = loaded.model->embedding().materialize(4096);
    out.head = loaded.model->embedding().tied_table().defined() ? HeadTying::tied : HeadTying::untied;
    out.tensor = loaded.config.model.embedding.kind + " input embedding, step " + std::to_string(loaded.step);
    return out;
  }
  for (const auto& p : loaded.model->named_parameters())
    if (p.key() == tensor) {
      out.matrix = p.value().detach();
      out.tensor = tensor;
      return out;
    }
  std::vector<std::string> names;
  for (const auto& p : loaded.model->named_parameters())
    if (p.value().dim() == 2) names.push_back(p.key());
  throw DataError(fmt::format("{}: the model has no parameter '{}' (2-D parameters: {})", dir.string(), tensor,
                              fmt::join(names, ", ")));
}

EmbeddingMatrix from_safetensors(const fs::path& file, const std::string& tensor) {
  EmbeddingMatrix out;
  out.format = "safetensors";
  std::vector<std::string> names;
  for (const auto& [name, e] : read_safetensors_header(file).tensors) names.push_back(name);
  if (tensor.empty() && is_ember_generated(names))
    throw DataError(file.string() +
                    ": an ember model whose input embedding is generated (no V x D table); pass its "
                    "run or checkpoint directory so that ember materialises it");
  out.tensor = tensor.empty() ? find_embedding_tensor(names, file.string()) : tensor;
  if (tensor.empty()) out.head = head_of(names);
  out.matrix = load_safetensors_tensor(file, out.tensor);
  return out;
}

EmbeddingMatrix from_index(const fs::path& index_file, const std::string& tensor) {
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(read_text_file(index_file));
  } catch (const nlohmann::json::exception&) {
    throw DataError(index_file.string() + ": not valid JSON (expected a safetensors index)");
  }
  if (!index.contains("weight_map") || !index["weight_map"].is_object())
    throw DataError(index_file.string() + ": no \"weight_map\" object (expected a safetensors index)");
  const auto& map = index["weight_map"];
  std::vector<std::string> names;
  for (const auto& [name, shard] : map.items()) {
    if (!shard.is_string())
      throw DataError(fmt::format("{}: weight_map['{}'] is {}, not a file name", index_file.string(), name, shard.dump()));
    names.push_back(name);
  }
  const std::string name = tensor.empty() ? find_embedding_tensor(names, index_file.string()) : tensor;
  if (!map.contains(name)) throw DataError(fmt::format("{}: the index has no tensor '{}'", index_file.string(), name));
  const fs::path shard = index_file.parent_path() / map[name].get<std::string>();
  std::error_code ec;  // a name the file system refuses (too long) is missing too, not a filesystem_error
  if (!fs::exists(shard, ec))
    throw DataError(
        fmt::format("{}: shard '{}' holding '{}' does not exist", index_file.string(), shard.string(), name));
  EmbeddingMatrix out;
  out.format = "safetensors (sharded)";
  out.tensor = name;
  if (tensor.empty()) out.head = head_of(names);
  out.matrix = load_safetensors_tensor(shard, name);
  return out;
}

EmbeddingMatrix from_directory(const fs::path& dir, const std::string& tensor) {
  if (is_ember_dir(dir)) return from_ember(dir, tensor);
  if (fs::exists(dir / "model.safetensors.index.json")) return from_index(dir / "model.safetensors.index.json", tensor);
  if (fs::exists(dir / "model.safetensors")) return from_safetensors(dir / "model.safetensors", tensor);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") files.push_back(e.path());
  if (files.size() == 1) return from_safetensors(files[0], tensor);
  throw DataError(
      fmt::format("'{}': expected an ember run or checkpoint directory, or a directory with "
                  "model.safetensors or model.safetensors.index.json (found {} .safetensors files)",
                  dir.string(), files.size()));
}

}  // namespace

std::string find_embedding_tensor(const std::vector<std::string>& names, const std::string& where) {
  for (const auto& known : kKnownNames)
    if (std::find(names.begin(), names.end(), known) != names.end()) return known;
  for (const auto& suffix : kKnownSuffixes)
    for (const auto& name : names)
      if (ends_with(name, suffix)) return name;
  std::vector<std::string> shown(names.begin(), names.begin() + std::min<size_t>(names.size(), 8));
  throw DataError(
      fmt::format("{}: no input-embedding tensor found (looked for {}, ...); pass --tensor NAME "
                  "(the file has {} tensors: {}{})",
                  where, fmt::join(kKnownNames.begin(), kKnownNames.begin() + 3, ", "), names.size(),
                  fmt::join(shown, ", "), names.size() > shown.size() ? ", ..." : ""));
}

EmbeddingMatrix load_embedding_matrix(const fs::path& input, const std::string& tensor) {
  if (!fs::exists(input)) throw DataError(fmt::format("'{}' does not exist", input.string()));
  EmbeddingMatrix out;
  const std::string name = input.filename().string();
  if (fs::is_directory(input))
    out = from_directory(input, tensor);
  else if (ends_with(name, ".index.json"))
    out = from_index(input, tensor);
  else if (ends_with(name, ".safetensors"))
    out = from_safetensors(input, tensor);
  else if (ends_with(name, ".npy"))
    out = EmbeddingMatrix{load_npy(input), "", "npy", "", HeadTying::unknown};
  else
    throw DataError(
        fmt::format("'{}': expected an ember run or checkpoint directory, a .safetensors file, "
                    "a model.safetensors.index.json, a directory holding one, or a .npy file",
                    input.string()));
  out.input = input.string();
  return out;
}

}  // namespace ember
