#include "ember/experiment/child_process.h"

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "ember/util/error.h"

extern char** environ;

namespace ember {
namespace {

// The running children, in slots a signal handler may read (lock-free atomics, kill()).
constexpr int kChildSlots = 256;
std::atomic<pid_t> g_children[kChildSlots];

void remember_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void forget_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

}  // namespace

void signal_children(int sig) {
  for (auto& slot : g_children)
    if (const pid_t pid = slot.load(); pid > 0) ::kill(pid, sig);
}

std::string self_executable() {
  auto path = std::filesystem::read_symlink("/proc/self/exe").string();
  // Rebuilt while running (a sweep outlives a `make`): the kernel marks the old file; the path now
  // holds the new build, which is what the next member should run.
  const std::string deleted = " (deleted)";
  if (path.ends_with(deleted)) path.resize(path.size() - deleted.size());
  return path;
}

pid_t spawn_child(const std::vector<std::string>& argv, const std::string& output, const std::string& stdout_file) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const int append = O_WRONLY | O_CREAT | O_APPEND;
  if (!output.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, output.c_str(), append, 0644);
    if (stdout_file.empty()) posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  }
  if (!stdout_file.empty())
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // SIGINT / SIGTERM wait while the child is started and remembered, so that a stop arriving in
  // between reaches it too; the child itself starts with the caller's mask.
  sigset_t stops, caller;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stops, &caller);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &caller);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  if (rc == 0) remember_child(pid);
  pthread_sigmask(SIG_SETMASK, &caller, nullptr);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error("cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      forget_child(pid);
      throw Error(std::string("waiting for a child process: ") + std::strerror(errno));
    }
  forget_child(pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_child(const std::vector<std::string>& argv, const std::string& output, const std::string& stdout_file) {
  return wait_child(spawn_child(argv, output, stdout_file));
}

}  // namespace ember
