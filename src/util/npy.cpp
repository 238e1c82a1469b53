#include "ember/util/npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>

#include "ember/util/error.h"

namespace ember {
namespace {

at::ScalarType dtype_of(const std::string& descr, const std::string& where) {
  static const std::map<std::string, at::ScalarType> table = {
      {"<f2", at::kHalf}, {"<f4", at::kFloat}, {"<f8", at::kDouble}, {"<i8", at::kLong},
      {"<i4", at::kInt},  {"<i2", at::kShort}, {"|i1", at::kChar},   {"|u1", at::kByte}};
  const auto it = table.find(descr);
  if (it == table.end())
    throw DataError(fmt::format("{}: unsupported .npy dtype '{}' (expected little-endian <f2, <f4, "
                                "<f8 or an integer type)", where, descr));
  return it->second;
}

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
std::string field(const std::string& header, const std::string& key, const std::string& where) {
  const std::regex re("'" + key + "'\\s*:\\s*('[^']*'|True|False|\\([^)]*\\))");
  std::smatch m;
  if (!std::regex_search(header, m, re))
    throw DataError(fmt::format("{}: .npy header lacks '{}'", where, key));
  return m[1].str();
}

std::vector<int64_t> parse_shape(const std::string& tuple) {
  std::vector<int64_t> shape;
  const std::regex num("\\d+");
  for (auto it = std::sregex_iterator(tuple.begin(), tuple.end(), num); it != std::sregex_iterator(); ++it)
    shape.push_back(std::stoll(it->str()));
  return shape;
}

}  // namespace

at::Tensor load_npy(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::ifstream f(path, std::ios::binary);
  if (!f) throw DataError("cannot open '" + where + "'");
  char magic[8] = {};
  f.read(magic, 8);
  if (!f || std::string(magic, 6) != "\x93NUMPY")
    throw DataError(where + ": not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  f.read(reinterpret_cast<char*>(&header_len), major == 1 ? 2 : 4);  // little-endian length
  std::string header(header_len, ' ');
  f.read(header.data(), header_len);
  if (!f) throw DataError(where + ": .npy header is truncated");
  const std::string descr = field(header, "descr", where);
  const auto dtype = dtype_of(descr.substr(1, descr.size() - 2), where);
  const bool fortran = field(header, "fortran_order", where) == "True";
  auto shape = parse_shape(field(header, "shape", where));
  if (fortran) std::reverse(shape.begin(), shape.end());
  auto t = at::empty(shape, at::TensorOptions().dtype(dtype));
  const auto bytes = static_cast<std::streamsize>(t.numel() * t.element_size());
  f.read(static_cast<char*>(t.data_ptr()), bytes);
  if (f.gcount() != bytes)
    throw DataError(fmt::format("{}: .npy data is truncated ({} of {} bytes for shape ({}))", where,
                                f.gcount(), bytes, fmt::join(shape, ", ")));
  if (fortran) {  // column-major data: the bytes are the transpose in row-major order
    std::vector<int64_t> perm(shape.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
    t = t.permute(perm).contiguous();
  }
  return t;
}

}  // namespace ember
