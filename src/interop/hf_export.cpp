#include "ember/interop/hf_export.h"

#include <fmt/format.h>

#include <optional>

#include "ember/config/json_writer.h"
#include "ember/data/hf_tokenizer.h"
#include "ember/interop/hf_files.h"
#include "ember/interop/hf_llama.h"
#include "ember/interop/modeling_ember_py.h"
#include "ember/run/model_loader.h"
#include "ember/run/run_data.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

namespace {

void write_json(const fs::path& file, const nlohmann::json& j) { write_file_atomic(file, j.dump(2) + "\n"); }

// The run's tokenizer (its data's manifest, or the run's record of it); nullopt with the reason when
// neither names one.
std::optional<TextEncoder> run_encoder(const LoadedModel& loaded, std::string& why) {
  try {
    return RunData(loaded.run_dir, loaded.config.data).encoder();
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
}

// Writes the tokenizer files; returns what the README says about them.
std::string write_tokenizer(const fs::path& dir, const LoadedModel& loaded, nlohmann::json& config,
                            nlohmann::json& generation) {
  const Config& cfg = loaded.config;
  std::string why;
  auto encoder = run_encoder(loaded, why);
  if (!encoder) return "No tokenizer files: the run's data does not name its tokenizer (" + why + ").";
  write_json(dir / "tokenizer.json", hf_tokenizer_json(*encoder));
  write_json(dir / "tokenizer_config.json", hf_tokenizer_config(*encoder, cfg.model.max_seq_len));
  uint32_t eos = 0;
  if (encoder->bpe() && encoder->document_separator(eos)) config["eos_token_id"] = generation["eos_token_id"] = eos;
  if (!encoder->bpe())
    return "The model is byte-level: token id = byte value (0-255). tokenizer.json holds that mapping as a "
           "byte-level BPE without merges.";
  return "tokenizer.json holds ember's '" + encoder->name() + "' tokenizer as a byte-level BPE (the same ids).";
}

std::string readme(const HfExportResult& r, const Config& cfg, at::ScalarType dtype) {
  std::string load = r.class_name == "LlamaForCausalLM"
                         ? "AutoModelForCausalLM.from_pretrained(DIR)"
                         : "AutoModelForCausalLM.from_pretrained(DIR, trust_remote_code=True)  # modeling_ember.py";
  return fmt::format(
      "# Exported by `ember export hf`\n\n"
      "Source: `{}` (step {}), embedding kind `{}`, mixer `{}`, {} weights.\n\n"
      "Load with transformers:\n\n    {}\n\n"
      "Class: {}. {}\n\n{}\n\n"
      "Non-table embedding kinds (lev, albert, flat_mlp, factored_mlp) are exported as their materialised "
      "V x D input table; config.json's `ember` key records the kind and its options.\n",
      r.checkpoint.string(), r.step, cfg.model.embedding.kind, cfg.model.mixer.kind,
      dtype == at::kBFloat16 ? "bf16" : "fp32", load, r.class_name,
      r.class_name == "LlamaForCausalLM" ? "Any tool that runs Llama runs it."
                                         : "Per-layer MLP widths and/or the attention gate need ember's class.",
      r.tokenizer);
}

}  // namespace

HfExportResult export_hf(const fs::path& source, const HfExportOptions& o) {
  if (o.dtype != at::kFloat && o.dtype != at::kBFloat16) throw UsageError("export hf: --dtype is fp32 or bf16");
  LoadedModel loaded = load_trained_model(source);
  const HfArchitecture arch = hf_architecture(*loaded.model);  // refuses before anything is written
  StagedDirectory out(o.out, "export hf");
  HfExportResult r;
  r.class_name = arch.class_name();
  r.checkpoint = loaded.checkpoint_dir;
  r.step = loaded.step;
  r.weight_files = static_cast<int64_t>(
      write_hf_weights(out.path(), hf_tensors(*loaded.model, arch, o.dtype), o.max_shard_bytes).size());
  nlohmann::json ember = {{"model", section_json(loaded.config.model)},
                          {"source", loaded.checkpoint_dir.string()},
                          {"step", loaded.step},
                          {"embedding_kind", loaded.config.model.embedding.kind}};
  auto config = hf_config_json(loaded.config.model, arch, o.dtype, ember);
  config["bos_token_id"] = config["eos_token_id"] = config["pad_token_id"] = nullptr;
  nlohmann::json generation = nlohmann::json::object();
  r.tokenizer = write_tokenizer(out.path(), loaded, config, generation);
  write_json(out.path() / "config.json", config);
  write_json(out.path() / "generation_config.json", generation);
  if (arch.remote_code()) write_file_atomic(out.path() / "modeling_ember.py", kModelingEmberPy);
  write_file_atomic(out.path() / "README.md", readme(r, loaded.config, o.dtype));
  out.publish();
  return r;
}

}  // namespace ember
