#include "ember/run/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

RunLock::RunLock(const fs::path& run_dir) {
  fs::create_directories(run_dir);
  const fs::path file = run_dir / ".lock";
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot open '" + file.string() + "': " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder = read_text_file(file);
    holder.erase(holder.find_last_not_of(" \n") + 1);
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw Error("cannot lock '" + file.string() + "': " + std::strerror(err));
    throw UsageError("run directory '" + run_dir.string() + "' is in use by another ember process (pid " +
                     (holder.empty() ? "unknown" : holder) +
                     "); wait for it to finish, or choose another log.name / --run-dir");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    throw Error("cannot write '" + file.string() + "': " + std::strerror(errno));
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace ember
