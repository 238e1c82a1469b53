#include "ember/run/train_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include "ember/util/error.h"

namespace ember {

nlohmann::json TrainState::to_json() const {
  nlohmann::json j = {{"step", step},
                      {"tokens_seen", tokens_seen},
                      {"skipped_steps", skipped_steps},
                      {"config_hash", config_hash},
                      {"model_hash", model_hash},
                      {"elapsed_s", elapsed_s},
                      {"world", world}};
  if (!origin.empty()) j["origin"] = origin;
  if (weights_only) j["weights_only"] = true;
  if (!kernels.is_null()) j["kernels"] = kernels;
  return j;
}

TrainState TrainState::from_json(const nlohmann::json& j, const std::string& where) {
  try {
    TrainState s;
    s.step = j.at("step").get<int64_t>();
    s.tokens_seen = j.at("tokens_seen").get<int64_t>();
    s.skipped_steps = j.value("skipped_steps", int64_t{0});
    s.config_hash = j.at("config_hash").get<std::string>();
    s.model_hash = j.at("model_hash").get<std::string>();
    s.elapsed_s = j.value("elapsed_s", 0.0);
    s.world = j.value("world", int64_t{1});
    s.origin = j.value("origin", std::string());
    s.weights_only = j.value("weights_only", false);
    s.kernels = j.value("kernels", nlohmann::json());
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(where + ": the train state in state.json lacks a field: " + e.what());
  }
}

void TrainState::load_state(const ComponentState& state, const std::string& where) {
  TrainState loaded = from_json(state.json, where);
  if (loaded.model_hash != model_hash)
    throw CheckpointError(where + " was trained with a different model config; resume needs the same model.* keys");
  loaded.config_hash = config_hash;
  const int64_t now_world = world;
  *this = loaded;
  world = now_world;
  saved_world = loaded.world;
}

ComponentState CpuRngState::save_state() const { return {{}, {{"cpu", cpu_rng_state_hex()}}}; }

void CpuRngState::load_state(const ComponentState& state, const std::string& where) {
  if (!state.json.contains("cpu") || !state.json["cpu"].is_string())
    throw CheckpointError(where + ": the rng state in state.json has no \"cpu\" generator");
  restore_cpu_rng_state(state.json["cpu"].get<std::string>());
}

std::string cpu_rng_state_hex() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  auto state = gen.get_state();
  const auto* bytes = state.data_ptr<uint8_t>();
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int64_t i = 0; i < state.numel(); ++i) {
    out.push_back(hex[bytes[i] >> 4]);
    out.push_back(hex[bytes[i] & 15]);
  }
  return out;
}

void restore_cpu_rng_state(const std::string& hex) {
  auto state = at::empty({static_cast<int64_t>(hex.size() / 2)}, at::kByte);
  auto* bytes = state.data_ptr<uint8_t>();
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes[i / 2] = static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16));
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

}  // namespace ember
