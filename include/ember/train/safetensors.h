// safetensors files: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the raw little-endian data.
// Readable by the Python `safetensors` package and other tools.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <string>

namespace ember {

using TensorMap = std::map<std::string, at::Tensor>;

void save_safetensors(const std::filesystem::path& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata = {});
// Throws CheckpointError naming the file on a malformed or truncated file.
TensorMap load_safetensors(const std::filesystem::path& path,
                           std::map<std::string, std::string>* metadata = nullptr);

std::string safetensors_dtype(at::ScalarType t);
at::ScalarType scalar_type_from_safetensors(const std::string& dtype, const std::string& where);

}  // namespace ember
