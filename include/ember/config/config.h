// The whole configuration: one section per component, each owned by that component.
#pragma once
#include <string>
#include <vector>

#include "ember/data/data_config.h"
#include "ember/eval/eval_config.h"
#include "ember/model/model_config.h"
#include "ember/train/checkpoint_config.h"
#include "ember/train/distributed_config.h"
#include "ember/train/log_config.h"
#include "ember/train/optim_config.h"
#include "ember/train/train_config.h"

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

  template <class V>
  void fields(V& v) {
    v.section("model", model);
    v.section("data", data);
    v.section("train", train);
    v.section("optim", optim);
    v.section("eval", eval);
    v.section("checkpoint", checkpoint);
    v.section("log", log);
    v.section("distributed", distributed);
  }
};

// Merge the files (later wins), apply --set overrides, validate. Throws ConfigError.
Config load_config(const std::vector<std::string>& files, const std::vector<std::string>& overrides);
Config parse_config_text(const std::string& yaml_text, const std::string& origin);
std::string to_yaml(const Config& cfg);       // fully resolved, every key
std::string config_hash(const Config& cfg);   // sha256 of to_yaml()

}  // namespace ember
