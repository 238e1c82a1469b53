#include "ember/data/text_encoder.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <optional>

#include "ember/data/byte_tokens.h"
#include "ember/data/shard.h"
#include "ember/data/tokenizer_presets.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

TextEncoder TextEncoder::bytes() { return TextEncoder(); }

TextEncoder::TextEncoder(std::shared_ptr<const Tokenizer> bpe) : bpe_(std::move(bpe)) {}

std::vector<uint32_t> TextEncoder::encode(std::string_view text) const {
  return bpe_ ? bpe_->encode(text) : byte_tokens(text);
}

std::string TextEncoder::decode(const std::vector<uint32_t>& ids) const {
  if (bpe_) return bpe_->decode(ids);
  std::string out;
  out.reserve(ids.size());
  for (const uint32_t id : ids) {
    if (id >= kByteVocabSize) throw DataError("byte-level decode: id " + std::to_string(id) + " is not a byte");
    out.push_back(static_cast<char>(id));
  }
  return out;
}

bool TextEncoder::document_separator(uint32_t& id) const {
  if (bpe_) return bpe_->document_separator(id);
  id = kByteDocumentSeparator;
  return true;
}

std::string TextEncoder::name() const { return bpe_ ? bpe_->name() : "bytes"; }

int64_t TextEncoder::vocab_size() const { return bpe_ ? bpe_->vocab_size() : kByteVocabSize; }

namespace {

// The tokenizer file a manifest names: as given (a preset, or a path from where prepare ran), else
// beside the manifest.
TokenizerSpec locate_tokenizer(const std::string& spec, const fs::path& manifest) {
  const auto presets = tokenizer_preset_names();
  if (std::find(presets.begin(), presets.end(), spec) != presets.end() || fs::is_regular_file(spec))
    return resolve_tokenizer(spec);
  const fs::path beside = manifest.parent_path() / fs::path(spec).filename();
  if (fs::is_regular_file(beside)) return resolve_tokenizer(beside.string());
  throw DataError(
      fmt::format("{}: the data was prepared with tokenizer '{}', which is not found (neither as given "
                  "nor beside the manifest)",
                  manifest.string(), spec));
}

}  // namespace

TextEncoder manifest_encoder(const fs::path& manifest) { return manifest_encoder(read_manifest(manifest), manifest); }

nlohmann::json read_manifest(const fs::path& manifest) {
  try {
    return nlohmann::json::parse(read_text_file(manifest));
  } catch (const nlohmann::json::exception& e) {
    throw DataError(manifest.string() + ": not valid JSON (" + e.what() + ")");
  }
}

TextEncoder manifest_encoder(const nlohmann::json& m, const fs::path& manifest) {
  const std::string kind = m.value("tokenizer", "");
  if (kind == "bytes") return TextEncoder::bytes();
  if (!m.contains("tokenizer_spec"))
    throw DataError(manifest.string() +
                    ": names no tokenizer (expected \"tokenizer\": \"bytes\" or a \"tokenizer_spec\")");
  auto tok = std::make_shared<const Tokenizer>(locate_tokenizer(m["tokenizer_spec"].get<std::string>(), manifest));
  const std::string want = m.value("tokenizer_sha256", "");
  if (!want.empty() && tok->hash() != want)
    throw DataError(fmt::format("{}: tokenizer '{}' differs from the one the data was prepared with (sha256 {} vs {})",
                                manifest.string(), tok->name(), tok->hash().substr(0, 12), want.substr(0, 12)));
  return TextEncoder(std::move(tok));
}

nlohmann::json manifest_tokenizer_keys(const nlohmann::json& m) {
  nlohmann::json keys = nlohmann::json::object();
  for (const char* k : {"tokenizer", "tokenizer_spec", "tokenizer_sha256"})
    if (m.contains(k)) keys[k] = m[k];
  return keys;
}

std::optional<DatasetTokenizer> manifest_tokenizer(const nlohmann::json& m, const fs::path& manifest) {
  if (m.value("tokenizer", "") == "bytes") return DatasetTokenizer{"bytes", "bytes", manifest};
  if (!m.contains("tokenizer_spec")) return std::nullopt;
  const std::string name = m["tokenizer_spec"].get<std::string>();
  return DatasetTokenizer{name, m.value("tokenizer_sha256", name), manifest};
}

TextEncoder dataset_encoder(const std::vector<std::string>& specs, const std::string& key) {
  if (specs.empty()) throw DataError(key + ": no shards, so no tokenizer to read text with");
  const auto shards = resolve_shards(specs, key);
  const fs::path manifest = shards.front().parent_path() / "manifest.json";
  if (!fs::exists(manifest))
    throw DataError(
        fmt::format("{}: no manifest.json beside '{}', so the tokenizer of this data is unknown; pass "
                    "token shards instead of text",
                    key, shards.front().string()));
  return manifest_encoder(manifest);
}

std::optional<DatasetTokenizer> dataset_tokenizer(const std::vector<std::string>& specs, const std::string& key) {
  std::vector<std::string> shard_specs;
  for (const auto& spec : specs)
    if (!is_text_input(spec)) shard_specs.push_back(spec);
  if (shard_specs.empty()) return std::nullopt;
  try {
    const fs::path manifest = resolve_shards(shard_specs, key).front().parent_path() / "manifest.json";
    if (!fs::exists(manifest)) return std::nullopt;
    return manifest_tokenizer(nlohmann::json::parse(read_text_file(manifest)), manifest);
  } catch (const std::exception&) {  // missing shards or an unreadable manifest: reported where they are read
    return std::nullopt;
  }
}

void require_same_tokenizer(const std::vector<std::string>& a, const std::string& a_key,
                            const std::vector<std::string>& b, const std::string& b_key) {
  require_same_tokenizer(dataset_tokenizer(a, a_key), a_key, b, b_key);
}

void require_same_tokenizer(const std::optional<DatasetTokenizer>& ta, const std::string& a_key,
                            const std::vector<std::string>& b, const std::string& b_key) {
  const auto tb = dataset_tokenizer(b, b_key);
  if (!ta || !tb || ta->identity == tb->identity) return;
  throw DataError(
      fmt::format("{} was tokenized with '{}' ({}) but {} with '{}' ({}); ids of different tokenizers "
                  "do not compare",
                  b_key, tb->name, tb->manifest.string(), a_key, ta->name, ta->manifest.string()));
}

bool is_text_input(const std::string& spec) {
  const fs::path p(spec);
  return spec.rfind("nanogpt:", 0) != 0 && fs::is_regular_file(p) && p.extension() != ".bin" && p.extension() != ".npy";
}

std::vector<std::string> encode_text_inputs(const std::vector<std::string>& specs,
                                            const std::function<TextEncoder()>& encoder, const fs::path& scratch) {
  std::vector<std::string> out;
  std::optional<TextEncoder> enc;
  for (const auto& spec : specs) {
    if (!is_text_input(spec)) {
      out.push_back(spec);
      continue;
    }
    if (!enc) enc = encoder();
    fs::create_directories(scratch);
    const fs::path shard = scratch / fmt::format("text_{:03d}.bin", out.size());
    write_shard(shard, enc->encode(read_text_file(spec)));
    out.push_back(shard.string());
  }
  return out;
}

}  // namespace ember
