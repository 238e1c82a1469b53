// Preparing a corpus as N disjoint parts, one job each (a Slurm array), joined afterwards by
// `ember prepare merge` (data/prepare_merge.h). Part I of N takes a contiguous run of the sorted
// document list, cut so that the parts hold about equal bytes, so the parts' token streams in
// order are the single-process run's.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace ember {

struct PreparePart {
  int index = 1, count = 1;  // 1-based
  bool whole() const { return count == 1; }
};

// "I/N" with 1 <= I <= N; a UsageError naming the text otherwise.
PreparePart parse_prepare_part(const std::string& text);

// [begin, end) of the documents (sizes in bytes, in list order) that part `p` prepares: document
// i goes to the part its middle byte falls in, so every part is contiguous and the parts cover the
// list once. Empty files, when all are, are spread by count.
std::pair<size_t, size_t> part_documents(const std::vector<uint64_t>& sizes, PreparePart p);

// sha256 over the whole document list (paths and sizes): the parts of one prepare share it.
std::string document_list_sha256(const std::vector<std::filesystem::path>& docs, const std::vector<uint64_t>& sizes);

}  // namespace ember
