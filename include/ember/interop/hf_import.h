// `ember import hf`: a Llama checkpoint directory (config.json + model.safetensors or a sharded
// index; fp32, fp16 or bf16) as an ember run directory: config.yaml (the model from config.json,
// the rest ember's defaults) and checkpoints/step_0 holding the weights in fp32 and a train state
// marked weights-only, so `ember eval`, `capacity` and `analyze` read it and `ember train --resume`
// continues from it with a new optimizer. Written beside the target and renamed into place.
#pragma once
#include <filesystem>
#include <string>

namespace ember {

struct HfImportResult {
  int64_t parameters = 0;
  std::string embedding_kind;  // tied or untied
  std::string mixer_kind;
  std::filesystem::path checkpoint;
};

HfImportResult import_hf(const std::filesystem::path& hf_dir, const std::filesystem::path& run_dir);

}  // namespace ember
