#include "ember/train/safetensors.h"

#include <nlohmann/json.hpp>

#include <fstream>

#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace {

const std::map<std::string, at::ScalarType>& dtype_table() {
  static const std::map<std::string, at::ScalarType> table = {
      {"F64", at::kDouble}, {"F32", at::kFloat},  {"F16", at::kHalf}, {"BF16", at::kBFloat16},
      {"I64", at::kLong},   {"I32", at::kInt},    {"I16", at::kShort}, {"I8", at::kChar},
      {"U8", at::kByte},    {"BOOL", at::kBool}, {"U16", at::kUInt16}, {"U32", at::kUInt32},
      {"U64", at::kUInt64}};
  return table;
}

}  // namespace

std::string safetensors_dtype(at::ScalarType t) {
  for (const auto& [name, type] : dtype_table())
    if (type == t) return name;
  throw Error(std::string("safetensors: unsupported dtype ") + c10::toString(t));
}

at::ScalarType scalar_type_from_safetensors(const std::string& dtype, const std::string& where) {
  auto it = dtype_table().find(dtype);
  if (it == dtype_table().end()) throw CheckpointError(where + ": unsupported dtype '" + dtype + "'");
  return it->second;
}

void save_safetensors(const std::filesystem::path& path, const TensorMap& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<at::Tensor> contiguous;
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    auto c = t.detach().to(at::kCPU).contiguous();
    const size_t bytes = c.numel() * c.element_size();
    header[name] = {{"dtype", safetensors_dtype(c.scalar_type())},
                    {"shape", c.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    contiguous.push_back(c);
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // align the data to 8 bytes
  const uint64_t n = json.size();
  std::string out(reinterpret_cast<const char*>(&n), 8);  // little-endian host (x86_64, aarch64)
  out += json;
  out.reserve(out.size() + offset);
  for (const auto& c : contiguous)
    out.append(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
  write_file_atomic(path, out);
}

TensorMap load_safetensors(const std::filesystem::path& path,
                           std::map<std::string, std::string>* metadata) {
  const std::string where = path.string();
  const std::string bytes = read_text_file(path);
  if (bytes.size() < 8) throw CheckpointError(where + ": too short for a safetensors header");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > bytes.size() - 8) throw CheckpointError(where + ": header length exceeds the file (truncated?)");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, n));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(where + ": header is not valid JSON");
  }
  const size_t data_start = 8 + n, data_size = bytes.size() - data_start;
  TensorMap out;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (metadata) *metadata = info.get<std::map<std::string, std::string>>();
      continue;
    }
    auto type = scalar_type_from_safetensors(info.at("dtype").get<std::string>(), where + ": " + name);
    auto shape = info.at("shape").get<std::vector<int64_t>>();
    auto offs = info.at("data_offsets").get<std::vector<size_t>>();
    auto t = at::empty(shape, at::TensorOptions().dtype(type));
    const size_t want = t.numel() * t.element_size();
    if (offs.size() != 2 || offs[1] < offs[0] || offs[1] - offs[0] != want || offs[1] > data_size)
      throw CheckpointError(where + ": tensor '" + name + "' has data offsets outside the file or "
                            "inconsistent with its shape (truncated?)");
    std::memcpy(t.data_ptr(), bytes.data() + data_start + offs[0], want);
    out[name] = t;
  }
  return out;
}

}  // namespace ember
