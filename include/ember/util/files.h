// Small filesystem helpers: durable writes (fsync + atomic rename) and whole-file reads.
#pragma once
#include <filesystem>
#include <string>

namespace ember {

namespace fs = std::filesystem;

std::string read_text_file(const fs::path& path);
// Writes to path.tmp, fsyncs, renames over path, fsyncs the directory.
void write_file_atomic(const fs::path& path, const std::string& contents);
void fsync_path(const fs::path& path);  // a file or a directory

// A directory written whole or not at all: files go to a staging directory beside `target`
// (.<name>.partial), publish() renames it into place; destroyed unpublished, it removes the staging
// directory. An existing target that is not an empty directory is a UsageError naming `what`.
class StagedDirectory {
 public:
  StagedDirectory(fs::path target, const std::string& what);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;
  const fs::path& path() const { return staging_; }
  void publish();

 private:
  fs::path target_, staging_;
  bool published_ = false;
};

}  // namespace ember
