#include "ember/util/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "ember/util/error.h"

namespace ember {

std::string read_text_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path.string() + "' for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void fsync_path(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error("cannot open '" + path.string() + "' to fsync");
  ::fsync(fd);
  ::close(fd);
}

void write_file_atomic(const fs::path& path, const std::string& contents) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write '" + tmp.string() + "'");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) throw Error("short write to '" + tmp.string() + "'");
  }
  fsync_path(tmp);
  fs::rename(tmp, path);
  fsync_path(path.has_parent_path() ? path.parent_path() : fs::path("."));
}

}  // namespace ember
