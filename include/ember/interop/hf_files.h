// A Hugging Face model directory on disk: config.json and the weights, either one
// model.safetensors or shards model-0000i-of-0000n.safetensors listed by model.safetensors.index.json
// ({"metadata": {"total_size"}, "weight_map": {tensor: file}}), as save_pretrained writes them.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <vector>

#include "ember/io/safetensors.h"

namespace ember {

// The files written, in order. One file when everything fits in max_shard_bytes.
std::vector<std::filesystem::path> write_hf_weights(const std::filesystem::path& dir, const TensorMap& tensors,
                                                    int64_t max_shard_bytes);
// A CheckpointError naming the directory and the file when the weights are absent, in another
// format (pytorch_model.bin) or inconsistent with the index.
TensorMap read_hf_weights(const std::filesystem::path& dir);
// dir/config.json parsed; a CheckpointError when it is missing or not JSON.
nlohmann::json read_hf_config(const std::filesystem::path& dir);
// "5GB", "200MB", "64KB" or a byte count; a UsageError naming `flag` otherwise.
int64_t parse_byte_size(const std::string& text, const std::string& flag);

}  // namespace ember
