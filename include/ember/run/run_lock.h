// An advisory lock on a run directory (flock on <run>/.lock), held for the life of the process:
// a second trainer, or --resume of a run that is still training, fails at once naming the
// holder's pid. The kernel drops the lock when the holder exits, however it exits (kill -9 too).
#pragma once
#include <filesystem>

namespace ember {

class RunLock {
 public:
  explicit RunLock(const std::filesystem::path& run_dir);  // UsageError when another process holds it
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace ember
