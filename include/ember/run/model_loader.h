// Load a trained model from a run directory or a checkpoint directory (no trainer needed):
// config from the run's config.yaml, weights from model.safetensors (checksums verified).
#pragma once
#include <filesystem>
#include <memory>

#include "ember/run/run_config.h"
#include "ember/model/lm.h"

namespace ember {

struct LoadedModel {
  Config config;
  std::shared_ptr<LanguageModel> model;
  std::filesystem::path checkpoint_dir;
  std::filesystem::path run_dir;  // the directory of config.yaml (and data.json: run/run_data.h)
  int64_t step = 0;
};

LoadedModel load_trained_model(const std::filesystem::path& run_or_checkpoint);

}  // namespace ember
