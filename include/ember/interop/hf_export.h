// `ember export hf`: a run or checkpoint as a directory transformers loads with
// AutoModelForCausalLM.from_pretrained: config.json, the weights (sharded with an index above the
// size limit), generation_config.json, the tokenizer where the run's data names one,
// modeling_ember.py when the model needs it, and a README saying what the directory holds. Written
// beside the target and renamed into place, so a failed export leaves nothing behind.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <string>
#include <vector>

namespace ember {

struct HfExportOptions {
  std::filesystem::path out;
  at::ScalarType dtype = at::kFloat;  // fp32 or bf16
  int64_t max_shard_bytes = 5'000'000'000;
};

struct HfExportResult {
  std::string class_name;  // LlamaForCausalLM or EmberForCausalLM
  std::filesystem::path checkpoint;
  int64_t step = 0;
  int64_t weight_files = 0;
  std::string tokenizer;  // what the directory holds for it
};

HfExportResult export_hf(const std::filesystem::path& run_or_checkpoint, const HfExportOptions& options);

}  // namespace ember
