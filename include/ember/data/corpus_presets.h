// Named corpora from Debian packages (installed by scripts/setup.sh):
//   pydoc     python3.11-doc: reStructuredText sources of the Python docs (~11 MB)
//   linuxdoc  linux-doc-6.1: the kernel docs' reStructuredText, without translations/ (~21 MB)
//   default   pydoc + linuxdoc: ember's default training corpus
//   kjv       bible-kjv: the King James Bible (narrative; out-of-distribution evaluation), one
//             document per book
//   handbook  debian-handbook: the Debian Administrator's Handbook, en-US HTML with tags
//             stripped (expository prose; out-of-distribution evaluation), one document per page
// kjv and handbook are evaluation sets: all of their documents go to the validation split.
// Package contents change with Debian updates; the manifest records each source's sha256.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace ember {

struct CorpusSource {
  std::vector<std::string> inputs;      // files or directories for prepare_text
  std::vector<std::string> extensions;  // taken from directories
  double val_fraction = 0.05;           // 1.0: evaluation-only corpus
};

std::vector<std::string> corpus_preset_names();
// Locates (or, for kjv and handbook, extracts into work_dir) the documents of a preset. Throws
// UsageError for an unknown name and DataError naming the missing package.
CorpusSource materialize_corpus(const std::string& name, const std::filesystem::path& work_dir);

}  // namespace ember
