#include "ember/data/document_source.h"

#include <algorithm>

#include "ember/util/error.h"

namespace ember {

namespace fs = std::filesystem;

std::vector<fs::path> list_documents(const std::vector<std::string>& inputs,
                                     const std::vector<std::string>& extensions, const std::string& what) {
  std::vector<fs::path> docs;
  for (const auto& in : inputs) {
    if (fs::is_regular_file(in)) {
      docs.emplace_back(in);
    } else if (fs::is_directory(in)) {
      for (const auto& e : fs::recursive_directory_iterator(in))
        if (e.is_regular_file() &&
            std::count(extensions.begin(), extensions.end(), e.path().extension().string()))
          docs.push_back(e.path());
    } else {
      throw DataError(what + ": input '" + in + "' does not exist");
    }
  }
  std::sort(docs.begin(), docs.end());
  if (docs.empty()) throw DataError(what + ": no input documents found");
  return docs;
}

}  // namespace ember
