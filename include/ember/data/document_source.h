// Finding the documents of a corpus: files as given, directories walked recursively for the
// chosen extensions, sorted so that the order never depends on the file system.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

// `what` prefixes errors (e.g. "prepare"). Throws DataError for a missing input or no documents.
std::vector<std::filesystem::path> list_documents(const std::vector<std::string>& inputs,
                                                  const std::vector<std::string>& extensions,
                                                  const std::string& what);

}  // namespace ember
