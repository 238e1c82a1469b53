#include "ember/io/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "ember/io/tensor_bytes.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace {

const std::map<std::string, at::ScalarType>& dtype_table() {
  static const std::map<std::string, at::ScalarType> table = {
      {"F64", at::kDouble}, {"F32", at::kFloat},  {"F16", at::kHalf},  {"BF16", at::kBFloat16}, {"I64", at::kLong},
      {"I32", at::kInt},    {"I16", at::kShort},  {"I8", at::kChar},   {"U8", at::kByte},       {"BOOL", at::kBool},
      {"U16", at::kUInt16}, {"U32", at::kUInt32}, {"U64", at::kUInt64}};
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
  for (const auto& c : contiguous) out.append(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
  write_file_atomic(path, out);
}

namespace {

size_t entry_bytes(at::ScalarType dtype, const std::vector<int64_t>& shape, const std::string& where) {
  if (std::any_of(shape.begin(), shape.end(), [](int64_t n) { return n < 0; }))
    throw CheckpointError(where + ": negative dimension in its shape");
  const auto bytes = tensor_bytes(shape, c10::elementSize(dtype));
  if (!bytes) throw CheckpointError(where + ": its shape holds more bytes than any file can");
  return *bytes;
}

// One header entry {dtype, shape, data_offsets}, checked against the data section's size.
SafetensorsEntry parse_entry(const nlohmann::json& info, size_t data_size, const std::string& where) {
  if (!info.is_object()) throw CheckpointError(where + ": expected {dtype, shape, data_offsets}, found " + info.dump());
  SafetensorsEntry e;
  try {
    e.dtype = scalar_type_from_safetensors(info.at("dtype").get<std::string>(), where);
    const auto& shape = info.at("shape");
    if (!shape.is_array()) throw CheckpointError(where + ": shape " + shape.dump() + " is not a list");
    for (const auto& n : shape) {
      if (!n.is_number_integer()) throw CheckpointError(where + ": shape entry " + n.dump() + " is not an integer");
      e.shape.push_back(n.get<int64_t>());
    }
    const auto& offs = info.at("data_offsets");
    if (!offs.is_array() || offs.size() != 2 || !offs[0].is_number_unsigned() || !offs[1].is_number_unsigned())
      throw CheckpointError(where + ": data_offsets " + offs.dump() + " is not [begin, end]");
    e.begin = offs[0].get<size_t>();
    e.end = offs[1].get<size_t>();
  } catch (const nlohmann::json::exception& ex) {
    throw CheckpointError(where + ": malformed header entry (" + ex.what() + ")");
  }
  if (e.end < e.begin || e.end - e.begin != entry_bytes(e.dtype, e.shape, where) || e.end > data_size)
    throw CheckpointError(where + " has data offsets outside the file or inconsistent with its shape (truncated?)");
  return e;
}

// Parses the JSON header of a file of `file_size` bytes whose data section starts at data_start,
// checking every tensor's offsets against its shape and the file.
SafetensorsHeader parse_header(const std::string& json_text, size_t data_start, size_t file_size,
                               const std::string& where) {
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(where + ": header is not valid JSON");
  }
  if (!header.is_object()) throw CheckpointError(where + ": header is not a JSON object");
  SafetensorsHeader out;
  out.data_start = data_start;
  const size_t data_size = file_size - data_start;
  for (const auto& [name, info] : header.items()) {
    if (name != "__metadata__") {
      out.tensors[name] = parse_entry(info, data_size, where + ": tensor '" + name + "'");
      continue;
    }
    if (!info.is_object()) throw CheckpointError(where + ": __metadata__ is not a JSON object");
    for (const auto& [key, value] : info.items()) {
      if (!value.is_string()) throw CheckpointError(where + ": __metadata__ '" + key + "' is not a string");
      out.metadata[key] = value.get<std::string>();
    }
  }
  return out;
}

uint64_t header_length(const char* first8, size_t file_size, const std::string& where) {
  if (file_size < 8) throw CheckpointError(where + ": too short for a safetensors header");
  uint64_t n = 0;
  std::memcpy(&n, first8, 8);
  if (n > file_size - 8) throw CheckpointError(where + ": header length exceeds the file (truncated?)");
  return n;
}

}  // namespace

TensorMap load_safetensors(const std::filesystem::path& path, std::map<std::string, std::string>* metadata) {
  const std::string where = path.string();
  const std::string bytes = read_text_file(path);
  const uint64_t n = header_length(bytes.data(), bytes.size(), where);
  const auto header = parse_header(bytes.substr(8, n), 8 + n, bytes.size(), where);
  if (metadata) *metadata = header.metadata;
  TensorMap out;
  for (const auto& [name, e] : header.tensors) {
    auto t = at::empty(e.shape, at::TensorOptions().dtype(e.dtype));
    // An empty tensor has no storage (a null data pointer): memcpy of nothing from it is still UB.
    if (e.end > e.begin) std::memcpy(t.data_ptr(), bytes.data() + header.data_start + e.begin, e.end - e.begin);
    out[name] = t;
  }
  return out;
}

SafetensorsHeader read_safetensors_header(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::ifstream f(path, std::ios::binary);
  if (!f) throw CheckpointError("cannot open '" + where + "'");
  const size_t size = std::filesystem::file_size(path);
  char first8[8] = {};
  f.read(first8, std::min<size_t>(size, 8));
  const uint64_t n = header_length(first8, size, where);
  std::string json(n, '\0');
  f.read(json.data(), static_cast<std::streamsize>(n));
  if (!f) throw CheckpointError(where + ": cannot read the header");
  return parse_header(json, 8 + n, size, where);
}

at::Tensor load_safetensors_tensor(const std::filesystem::path& path, const std::string& name) {
  const auto header = read_safetensors_header(path);
  const auto it = header.tensors.find(name);
  if (it == header.tensors.end()) {
    std::string have;
    for (const auto& [other, e] : header.tensors) have += (have.empty() ? "" : ", ") + other;
    throw CheckpointError(path.string() + ": no tensor '" + name +
                          "' (the file has: " + (have.size() > 300 ? have.substr(0, 300) + ", ..." : have) + ")");
  }
  const auto& e = it->second;
  auto t = at::empty(e.shape, at::TensorOptions().dtype(e.dtype));
  std::ifstream f(path, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(header.data_start + e.begin));
  f.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(e.end - e.begin));
  if (!f) throw CheckpointError(path.string() + ": cannot read tensor '" + name + "' (truncated?)");
  return t;
}

}  // namespace ember
