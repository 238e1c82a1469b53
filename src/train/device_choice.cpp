#include "ember/train/device_choice.h"

#include <fmt/format.h>
#include <torch/cuda.h>

#include "ember/config/enum_names.h"
#include "ember/util/error.h"

namespace ember {

at::Device resolve_device(DeviceChoice want, const std::string& key, int local_rank) {
  if (want == DeviceChoice::cuda && !torch::cuda::is_available())
    throw ConfigError(key + ": 'cuda' requested but no CUDA device is available");
  if (want == DeviceChoice::cpu || !torch::cuda::is_available()) return at::kCPU;
  if (local_rank >= static_cast<int>(torch::cuda::device_count()))
    throw ConfigError(fmt::format("distributed: local rank {} but only {} CUDA device(s) on this node", local_rank,
                                  torch::cuda::device_count()));
  return {at::kCUDA, static_cast<c10::DeviceIndex>(local_rank)};
}

at::Device resolve_device(const std::string& want, const std::string& key) {
  DeviceChoice choice{};
  if (!enum_from_name(want, choice)) throw ConfigError(key + ": expected auto, cpu or cuda, got '" + want + "'");
  return resolve_device(choice, key);
}

}  // namespace ember
