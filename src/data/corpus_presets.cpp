#include "ember/data/corpus_presets.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstdio>
#include <memory>

#include "ember/data/html_text.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace {

const char* const kPyDoc = "/usr/share/doc/python3.11/html/_sources";
const char* const kLinuxDoc = "/usr/share/doc/linux-doc-6.1/html/_sources";
const char* const kHandbook = "/usr/share/doc/debian-handbook/html/en-US";

void require_dir(const std::string& dir, const std::string& package) {
  if (!fs::is_directory(dir))
    throw DataError("prepare corpus: " + dir + " is missing; install the Debian package " + package +
                    " (scripts/setup.sh does)");
}

// The kernel docs without translations/ (the other languages would leak into an English corpus).
std::vector<std::string> linuxdoc_inputs() {
  require_dir(kLinuxDoc, "linux-doc-6.1");
  std::vector<std::string> in;
  for (const auto& e : fs::directory_iterator(kLinuxDoc))
    if (e.path().filename() != "translations") in.push_back(e.path().string());
  std::sort(in.begin(), in.end());
  return in;
}

std::string run_command(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  if (!pipe) throw DataError("prepare corpus: cannot run '" + cmd + "'");
  std::string out;
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe.get())) > 0;) out.append(buf, n);
  if (::pclose(pipe.release()) != 0 || out.empty())
    throw DataError("prepare corpus: '" + cmd +
                    "' failed; install bible-kjv and bible-kjv-text (scripts/setup.sh does)");
  return out;
}

// `bible -f` prints "Ge1:1 In the beginning ..." per verse: one file per book, chapters as
// paragraphs, verse references dropped.
std::vector<std::string> extract_kjv(const fs::path& dir) {
  const std::string text = run_command("bible -f gen1:1-rev22:21 2>/dev/null");
  fs::create_directories(dir);
  std::vector<std::string> files;
  std::string book, chapter, body;
  auto flush = [&] {
    if (book.empty()) return;
    const fs::path f = dir / fmt::format("{:02d}_{}.txt", files.size() + 1, book);
    write_file_atomic(f, body);
    files.push_back(f.string());
    body.clear();
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t colon = line.find(':'), space = line.find(' ');
    if (colon == std::string::npos || space == std::string::npos || colon > space) {
      if (!line.empty()) body += line + "\n";
      continue;
    }
    const size_t digits = line.find_first_of("0123456789", 1);
    const std::string b = line.substr(0, digits), ch = line.substr(digits, colon - digits);
    if (b != book) flush(), book = b, chapter.clear();
    if (ch != chapter && !chapter.empty())
      body += "\n\n";
    else if (!body.empty())
      body += " ";
    chapter = ch;
    body += line.substr(space + 1);
  }
  flush();
  return files;
}

std::vector<std::string> extract_handbook(const fs::path& dir) {
  require_dir(kHandbook, "debian-handbook");
  fs::create_directories(dir);
  std::vector<fs::path> pages;
  for (const auto& e : fs::directory_iterator(kHandbook))
    if (e.path().extension() == ".html") pages.push_back(e.path());
  std::sort(pages.begin(), pages.end());
  std::vector<std::string> files;
  for (const auto& p : pages) {
    const fs::path f = dir / (p.stem().string() + ".txt");
    write_file_atomic(f, html_to_text(read_text_file(p)));
    files.push_back(f.string());
  }
  return files;
}

}  // namespace

std::vector<std::string> corpus_preset_names() { return {"default", "pydoc", "linuxdoc", "kjv", "handbook"}; }

CorpusSource materialize_corpus(const std::string& name, const fs::path& work_dir) {
  CorpusSource s;
  s.extensions = {".txt"};
  if (name == "pydoc" || name == "default") {
    require_dir(kPyDoc, "python3.11-doc");
    s.inputs.push_back(kPyDoc);
  }
  if (name == "linuxdoc" || name == "default") {
    const auto in = linuxdoc_inputs();
    s.inputs.insert(s.inputs.end(), in.begin(), in.end());
  }
  if (name == "kjv" || name == "handbook") {
    s.inputs = name == "kjv" ? extract_kjv(work_dir / "kjv") : extract_handbook(work_dir / "handbook");
    s.val_fraction = 1.0;
  }
  if (s.inputs.empty()) {
    std::string names;
    for (const auto& n : corpus_preset_names()) names += (names.empty() ? "" : ", ") + n;
    throw UsageError("prepare corpus: unknown corpus '" + name + "' (expected one of " + names + ")");
  }
  return s;
}

}  // namespace ember
