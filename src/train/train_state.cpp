#include "ember/train/train_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include "ember/util/error.h"

namespace ember {

nlohmann::json TrainState::to_json() const {
  return {{"step", step},
          {"tokens_seen", tokens_seen},
          {"skipped_steps", skipped_steps},
          {"loader", {{"epoch", loader.epoch}, {"cursor", loader.cursor},
                      {"shard", next_shard}, {"position", next_position}}},
          {"rng_state", rng_state},
          {"config_hash", config_hash},
          {"model_hash", model_hash},
          {"elapsed_s", elapsed_s}};
}

TrainState TrainState::from_json(const nlohmann::json& j, const std::string& where) {
  try {
    TrainState s;
    s.step = j.at("step").get<int64_t>();
    s.tokens_seen = j.at("tokens_seen").get<int64_t>();
    s.skipped_steps = j.value("skipped_steps", int64_t{0});
    s.loader = LoaderState::from_json(j.at("loader"));
    s.next_shard = j.at("loader").value("shard", "");
    s.next_position = j.at("loader").value("position", int64_t{0});
    s.rng_state = j.at("rng_state").get<std::string>();
    s.config_hash = j.at("config_hash").get<std::string>();
    s.model_hash = j.at("model_hash").get<std::string>();
    s.elapsed_s = j.value("elapsed_s", 0.0);
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(where + ": state.json is missing a field: " + e.what());
  }
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
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes[i / 2] = static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16));
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

}  // namespace ember
