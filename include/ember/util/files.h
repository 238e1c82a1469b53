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

}  // namespace ember
