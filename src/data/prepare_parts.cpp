#include "ember/data/prepare_parts.h"

#include <fmt/format.h>

#include <regex>

#include "ember/util/error.h"
#include "ember/util/sha256.h"

namespace ember {

PreparePart parse_prepare_part(const std::string& text) {
  static const std::regex form(R"(\s*(\d{1,6})\s*/\s*(\d{1,6})\s*)");
  std::smatch m;
  if (std::regex_match(text, m, form)) {
    const PreparePart p{std::stoi(m[1]), std::stoi(m[2])};
    if (p.index >= 1 && p.index <= p.count) return p;
  }
  throw UsageError(fmt::format("--part: expected I/N with 1 <= I <= N (e.g. 2/8, or $((SLURM_ARRAY_TASK_ID+1))/8), "
                               "got '{}'",
                               text));
}

std::pair<size_t, size_t> part_documents(const std::vector<uint64_t>& sizes, PreparePart p) {
  const size_t n = sizes.size();
  long double total = 0;
  for (const auto s : sizes) total += static_cast<long double>(s);
  // The part of document i: its middle byte's share of the total (its index's share if all are empty).
  auto part_of = [&, start = 0.0L, i = size_t{0}]() mutable {
    const long double middle = total > 0 ? (start + sizes[i] / 2.0L) / total : (i + 0.5L) / static_cast<long double>(n);
    start += static_cast<long double>(sizes[i++]);
    return std::min(p.count - 1, static_cast<int>(middle * p.count));
  };
  size_t begin = n, end = n;
  for (size_t i = 0; i < n; ++i) {
    const int part = part_of();
    if (part == p.index - 1 && begin == n) begin = i;
    if (part >= p.index && end == n) end = i;
  }
  if (begin == n) return {end, end};  // no document in this part
  return {begin, end};
}

std::string document_list_sha256(const std::vector<std::filesystem::path>& docs, const std::vector<uint64_t>& sizes) {
  std::string list;
  for (size_t i = 0; i < docs.size(); ++i) list += fmt::format("{}\t{}\n", docs[i].string(), sizes[i]);
  return sha256_hex(list);
}

}  // namespace ember
