#include "ember/data/document_source.h"

#include <algorithm>

#include "ember/util/error.h"
#include "ember/util/sha256.h"

namespace ember {

namespace fs = std::filesystem;
namespace {

// Whether the file name ends with one of `extensions` (".jsonl.gz" too), longer than it.
bool has_extension(const fs::path& path, const std::vector<std::string>& extensions) {
  const std::string name = path.filename().string();
  return std::any_of(extensions.begin(), extensions.end(), [&](const std::string& e) {
    return name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
  });
}

}  // namespace

std::vector<fs::path> list_documents(const std::vector<std::string>& inputs, const std::vector<std::string>& extensions,
                                     const std::string& what) {
  std::vector<fs::path> docs;
  for (const auto& in : inputs) {
    if (fs::is_regular_file(in)) {
      docs.emplace_back(in);
    } else if (fs::is_directory(in)) {
      for (const auto& e : fs::recursive_directory_iterator(in))
        if (e.is_regular_file() && has_extension(e.path(), extensions)) docs.push_back(e.path());
    } else {
      throw DataError(what + ": input '" + in + "' does not exist");
    }
  }
  std::sort(docs.begin(), docs.end());
  if (docs.empty()) throw DataError(what + ": no input documents found");
  return docs;
}

bool document_goes_to_val(const std::string& key, double val_fraction) {
  const std::string h = sha256_hex(key).substr(0, 8);
  return static_cast<double>(std::stoul(h, nullptr, 16)) / 4294967296.0 < val_fraction;
}

}  // namespace ember
