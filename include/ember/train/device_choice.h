// The device a run or a tool uses (train.device, or a subcommand's --device).
#pragma once
#include <ATen/ATen.h>

#include <string>

#include "ember/config/train_config.h"

namespace ember {

// cpu, cuda, or auto (CUDA when available); on CUDA the GPU of `local_rank` (each data-parallel
// rank its own). A ConfigError naming `key` when CUDA is asked for and absent, or when the node has
// fewer GPUs than `local_rank` needs.
at::Device resolve_device(DeviceChoice want, const std::string& key, int local_rank = 0);
// The same from a spelling (auto, cpu, cuda); a ConfigError naming `key` for any other.
at::Device resolve_device(const std::string& want, const std::string& key);

}  // namespace ember
