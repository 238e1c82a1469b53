// safetensors files: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the raw little-endian data.
// Readable by the Python `safetensors` package and other tools.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ember {

using TensorMap = std::map<std::string, at::Tensor>;

void save_safetensors(const std::filesystem::path& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata = {});
// Throws CheckpointError naming the file on a malformed or truncated file.
TensorMap load_safetensors(const std::filesystem::path& path, std::map<std::string, std::string>* metadata = nullptr);

// The header alone: what a file holds, without reading the data (for multi-GB checkpoints).
struct SafetensorsEntry {
  at::ScalarType dtype = at::kFloat;
  std::vector<int64_t> shape;
  size_t begin = 0, end = 0;  // byte offsets within the data section
};
struct SafetensorsHeader {
  std::map<std::string, SafetensorsEntry> tensors;
  std::map<std::string, std::string> metadata;
  size_t data_start = 0;  // file offset of the data section
};
// Both throw CheckpointError naming the file (and tensor) on a malformed or truncated file.
SafetensorsHeader read_safetensors_header(const std::filesystem::path& path);
// Reads one tensor's bytes only; a missing name is a CheckpointError listing what the file has.
at::Tensor load_safetensors_tensor(const std::filesystem::path& path, const std::string& name);

std::string safetensors_dtype(at::ScalarType t);
at::ScalarType scalar_type_from_safetensors(const std::string& dtype, const std::string& where);

}  // namespace ember
