// Finding the documents of a corpus: files as given, directories walked recursively for the
// chosen extensions (name endings, so ".jsonl.gz" works), sorted so that the order never depends on the file system.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

// `what` prefixes errors (e.g. "prepare"). Throws DataError for a missing input or no documents.
std::vector<std::filesystem::path> list_documents(const std::vector<std::string>& inputs,
                                                  const std::vector<std::string>& extensions, const std::string& what);

// Whether a document goes to the validation split: the first 32 bits of sha256(key) as a fraction
// of 2^32 below val_fraction. Depends only on the key, never on the order documents are found.
bool document_goes_to_val(const std::string& key, double val_fraction);

}  // namespace ember
