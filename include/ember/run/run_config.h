// The whole configuration of a run: one section per component, each defined by its owner
// (model.* in model/, data.* in data/, the trainer's and evaluator's sections in config/). It
// lives at the run layer, above model and data, because it gathers their sections; train,
// eval and analysis read it (a run directory's config.yaml is this, fully resolved).
#pragma once
#include <string>
#include <vector>

#include "ember/config/checkpoint_config.h"
#include "ember/config/distributed_config.h"
#include "ember/config/eval_config.h"
#include "ember/config/log_config.h"
#include "ember/config/optim_config.h"
#include "ember/config/train_config.h"
#include "ember/data/data_config.h"
#include "ember/model/model_config.h"
#include "ember/kernels/kernels_config.h"

namespace ember {

struct Config {
  ModelConfig model;
  DataConfig data;
  TrainConfig train;
  OptimConfig optim;
  EvalConfig eval;
  CheckpointConfig checkpoint;
  LogConfig log;
  DistributedConfig distributed;
  KernelsConfig kernels;

  void fields(FieldVisitor& v) {
    v.section("model", model);
    v.section("data", data);
    v.section("train", train);
    v.section("optim", optim);
    v.section("eval", eval);
    v.section("checkpoint", checkpoint);
    v.section("log", log);
    v.section("distributed", distributed);
    v.section("kernels", kernels);
  }
};

// Merge the files (later wins), apply --set overrides, validate. Throws ConfigError.
Config load_config(const std::vector<std::string>& files, const std::vector<std::string>& overrides);
Config parse_config_text(const std::string& yaml_text, const std::string& origin);
std::string to_yaml(const Config& cfg);        // fully resolved, every key
std::string config_hash(const Config& cfg);    // sha256 of to_yaml()
std::string model_hash(const ModelConfig& m);  // sha256 of the model section alone

// The keys under `section` whose values differ between two configs' YAML, as
// "model.mixer.kind: attention -> titans" (a key present on one side only shows "(none)").
std::vector<std::string> changed_keys(const std::string& old_yaml, const std::string& new_yaml,
                                      const std::string& section);

}  // namespace ember
