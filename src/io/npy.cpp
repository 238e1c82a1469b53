#include "ember/io/npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>

#include "ember/io/tensor_bytes.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace {

at::ScalarType dtype_of(const std::string& descr, const std::string& where) {
  static const std::map<std::string, at::ScalarType> table = {
      {"<f2", at::kHalf}, {"<f4", at::kFloat}, {"<f8", at::kDouble}, {"<i8", at::kLong},
      {"<i4", at::kInt},  {"<i2", at::kShort}, {"|i1", at::kChar},   {"|u1", at::kByte}};
  const auto it = table.find(descr);
  if (it == table.end())
    throw DataError(
        fmt::format("{}: unsupported .npy dtype '{}' (expected little-endian <f2, <f4, "
                    "<f8 or an integer type)",
                    where, descr));
  return it->second;
}

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// The patterns are compiled once: compiling a std::regex costs more than parsing a header.
std::string field(const std::string& header, const std::string& key, const std::string& where) {
  static const std::map<std::string, std::regex> patterns = [] {
    std::map<std::string, std::regex> p;
    for (const char* k : {"descr", "fortran_order", "shape"})
      p.emplace(k, std::regex(std::string("'") + k + "'\\s*:\\s*('[^']*'|True|False|\\([^)]*\\))"));
    return p;
  }();
  std::smatch m;
  if (!std::regex_search(header, m, patterns.at(key))) throw DataError(fmt::format("{}: .npy header lacks '{}'", where, key));
  return m[1].str();
}

// The shape tuple "(3, 4)", "(5,)" or "()": non-negative integers, nothing else.
std::vector<int64_t> parse_shape(const std::string& tuple, const std::string& where) {
  const auto bad = [&] { return DataError(fmt::format("{}: .npy shape {} is not a tuple of sizes", where, tuple)); };
  std::vector<int64_t> shape;
  size_t i = 1;  // past '('
  const size_t end = tuple.size() - 1;  // at ')'
  while (true) {
    while (i < end && tuple[i] == ' ') ++i;
    if (i == end) break;
    const size_t digits = tuple.find_first_not_of("0123456789", i);
    if (digits == i || digits - i > 18) throw bad();  // 18 digits always fit in int64
    shape.push_back(std::stoll(tuple.substr(i, digits - i)));
    i = digits;
    while (i < end && tuple[i] == ' ') ++i;
    if (i == end) break;
    if (tuple[i] != ',') throw bad();
    ++i;
  }
  return shape;
}

size_t array_bytes(at::ScalarType dtype, const std::vector<int64_t>& shape, const std::string& where) {
  const auto bytes = tensor_bytes(shape, c10::elementSize(dtype));
  if (!bytes)
    throw DataError(fmt::format("{}: .npy shape ({}) holds more bytes than any file can", where, fmt::join(shape, ", ")));
  return *bytes;
}

}  // namespace

void save_npy(const std::filesystem::path& path, const at::Tensor& t) {
  static const std::map<at::ScalarType, std::string> descr = {
      {at::kHalf, "<f2"}, {at::kFloat, "<f4"}, {at::kDouble, "<f8"}, {at::kLong, "<i8"},
      {at::kInt, "<i4"},  {at::kShort, "<i2"}, {at::kChar, "|i1"},   {at::kByte, "|u1"}};
  const auto it = descr.find(t.scalar_type());
  if (it == descr.end())
    throw DataError(fmt::format("{}: cannot write a {} tensor as .npy", path.string(), c10::toString(t.scalar_type())));
  const auto data = t.detach().to(at::kCPU).contiguous();
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}{}), }}", it->second,
                                 fmt::join(data.sizes(), ", "), data.dim() == 1 ? "," : "");
  dict.append(63 - (10 + dict.size()) % 64, ' ').push_back('\n');  // the data starts at a multiple of 64
  std::string bytes = "\x93NUMPY";
  bytes += '\x01', bytes += '\x00';
  bytes += static_cast<char>(dict.size() & 0xff), bytes += static_cast<char>(dict.size() >> 8);
  bytes += dict;
  bytes.append(static_cast<const char*>(data.data_ptr()), static_cast<size_t>(data.numel() * data.element_size()));
  write_file_atomic(path, bytes);
}

size_t npy_header_size(const uint8_t* p, size_t size, const std::string& where) {
  if (size < 10 || std::string(reinterpret_cast<const char*>(p), 6) != "\x93NUMPY")
    throw DataError(where + ": not a .npy file (missing \\x93NUMPY magic)");
  if (p[6] < 1 || p[6] > 3) throw DataError(fmt::format("{}: unsupported .npy format version {}", where, p[6]));
  const bool v1 = p[6] == 1;  // v1: 2-byte length; v2, v3: 4 bytes; little-endian
  if (!v1 && size < kNpyPreamble) throw DataError(where + ": truncated .npy header");
  const size_t dict = v1 ? (size_t(p[8]) | size_t(p[9]) << 8)
                         : (size_t(p[8]) | size_t(p[9]) << 8 | size_t(p[10]) << 16 | size_t(p[11]) << 24);
  // numpy.load's own default limit (max_header_size): a longer dict is not an array's header.
  if (dict > kNpyMaxHeader)
    throw DataError(fmt::format("{}: .npy header of {} bytes (numpy writes at most {})", where, dict, kNpyMaxHeader));
  return (v1 ? 10 : 12) + dict;
}

NpyHeader parse_npy_header(const uint8_t* p, size_t size, const std::string& where) {
  NpyHeader h;
  h.data_offset = npy_header_size(p, size, where);
  if (h.data_offset > size) throw DataError(where + ": truncated .npy header");
  const size_t start = p[6] == 1 ? 10 : 12;
  const std::string dict(reinterpret_cast<const char*>(p + start), h.data_offset - start);
  const std::string descr = field(dict, "descr", where);
  h.descr = descr.substr(1, descr.size() - 2);
  h.fortran_order = field(dict, "fortran_order", where) == "True";
  h.shape = parse_shape(field(dict, "shape", where), where);
  return h;
}

at::Tensor load_npy(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::ifstream f(path, std::ios::binary);
  if (!f) throw DataError("cannot open '" + where + "'");
  std::vector<uint8_t> head(kNpyPreamble);
  f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(f.gcount()));
  head.resize(std::max(head.size(), npy_header_size(head.data(), head.size(), where)));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  if (!f) throw DataError(where + ": .npy header is truncated");
  const NpyHeader h = parse_npy_header(head.data(), head.size(), where);
  const auto dtype = dtype_of(h.descr, where);
  auto shape = h.shape;
  if (h.fortran_order) std::reverse(shape.begin(), shape.end());
  const size_t bytes = array_bytes(dtype, shape, where);
  const size_t available = std::filesystem::file_size(path) - h.data_offset;  // the header fitted
  if (bytes > available)  // checked before allocating: a header may claim any size
    throw DataError(fmt::format("{}: .npy data is truncated ({} of {} bytes for shape ({}))", where, available, bytes,
                                fmt::join(shape, ", ")));
  auto t = at::empty(shape, at::TensorOptions().dtype(dtype));
  if (bytes > 0) {  // an empty tensor has no storage to read into
    f.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(bytes));
    if (static_cast<size_t>(f.gcount()) != bytes) throw DataError(where + ": read error in the .npy data");
  }
  if (h.fortran_order) {  // column-major data: the bytes are the transpose in row-major order
    std::vector<int64_t> perm(shape.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
    t = t.permute(perm).contiguous();
  }
  return t;
}

}  // namespace ember
