#include "ember/distributed/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "ember/util/error.h"
#include "launch_round.h"

extern char** environ;

namespace ember {
namespace {

namespace fs = std::filesystem;

volatile std::sig_atomic_t g_forward_signal = 0;
int g_wake_fd = -1;

void on_signal(int sig) {
  g_forward_signal = sig;
  const char b = 1;
  [[maybe_unused]] auto n = ::write(g_wake_fd, &b, 1);
}

std::chrono::steady_clock::time_point deadline(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

struct Rank {
  int rank = 0;
  pid_t pid = -1;
  int out = -1, err = -1;  // read ends of the child's stdout / stderr
  std::string out_buf, err_buf;
  std::string last_error;     // its last line with "error:" (for the cause of a failure)
  std::optional<int> status;  // exit code, or 128 + signal
  std::chrono::steady_clock::time_point exited_at;
};

// After a rank exits, its pipes are read for this long more: a process it left behind that holds
// them open does not keep the launcher waiting.
constexpr auto kDrainAfterExit = std::chrono::seconds(2);

// What a rank runs: argv and its whole environment, built before fork() (the launcher may have threads
// of its own, --max-restarts' store: after fork only async-signal-safe calls are made).
struct RankCommand {
  std::vector<std::string> argv, env;
};

bool is_ember_train(const std::vector<std::string>& words) {
  return words.size() >= 2 && (words[0] == "ember" || fs::path(words[0]).filename() == "ember") && words[1] == "train";
}

RankCommand rank_command(const LaunchOptions& opt, const Round& round, int local) {
  RankCommand c;
  c.argv = opt.command;
  if (c.argv[0] == "ember") c.argv[0] = fs::read_symlink("/proc/self/exe").string();
  // A restart continues from the last complete checkpoint (a run without one starts at step 0).
  if (round.restart > 0 && is_ember_train(opt.command) &&
      std::find(c.argv.begin(), c.argv.end(), "--resume") == c.argv.end())
    c.argv.push_back("--resume");
  const std::map<std::string, std::string> set = {
      {"RANK", std::to_string(opt.node_rank * opt.nproc + local)},
      {"WORLD_SIZE", std::to_string(opt.nproc * opt.nnodes)},
      {"LOCAL_RANK", std::to_string(local)},
      {"LOCAL_WORLD_SIZE", std::to_string(opt.nproc)},
      {"MASTER_ADDR", opt.master_addr},
      {"MASTER_PORT", std::to_string(round.master_port)},
      {"EMBER_RESTART_COUNT", std::to_string(round.restart)}};
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    if (!set.count(kv.substr(0, kv.find('=')))) c.env.push_back(kv);
  }
  for (const auto& [k, v] : set) c.env.push_back(k + "=" + v);
  return c;
}

[[noreturn]] void exec_rank(RankCommand& c, int out_w, int err_w, pid_t launcher) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);         // the launcher killed with -9: the ranks stop (and checkpoint)
  if (::getppid() != launcher) ::_exit(143);  // it died before prctl: nobody would signal this rank
  ::dup2(out_w, STDOUT_FILENO);
  ::dup2(err_w, STDERR_FILENO);
  std::vector<char*> argv, envp;
  for (auto& w : c.argv) argv.push_back(w.data());
  argv.push_back(nullptr);
  for (auto& e : c.env) envp.push_back(e.data());
  envp.push_back(nullptr);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::execvpe(argv[0], argv.data(), envp.data());
  const std::string msg = std::string("ember launch: cannot run '") + argv[0] + "': " + std::strerror(errno) + "\n";
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, msg.data(), msg.size());
  ::_exit(127);
}

Rank start_rank(const LaunchOptions& opt, const Round& round, int local) {
  int out[2], err[2];  // close-on-exec: no rank inherits another's pipes (dup2 onto 1 and 2 clears it)
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw Error(std::string("ember launch: pipe: ") + std::strerror(errno));
  RankCommand command = rank_command(opt, round, local);
  Rank r;
  r.rank = opt.node_rank * opt.nproc + local;
  const pid_t launcher = ::getpid();
  r.pid = ::fork();
  if (r.pid < 0) throw Error(std::string("ember launch: fork: ") + std::strerror(errno));
  if (r.pid == 0) {
    ::close(out[0]), ::close(err[0]);
    exec_rank(command, out[1], err[1], launcher);
  }
  ::setpgid(r.pid, r.pid);  // also here, so that a signal sent right away finds the group
  ::close(out[1]), ::close(err[1]);
  r.out = out[0], r.err = err[0];
  return r;
}

// Reads what a pipe has; prints each complete line with the rank's prefix.
void pump(int& fd, std::string& buf, FILE* to, Rank& r) {
  const auto emit = [&](const std::string& line) {
    std::fprintf(to, "[rank %d] %s\n", r.rank, line.c_str());
    if (line.find("error:") != std::string::npos) r.last_error = line;
  };
  char chunk[4096];
  const ssize_t n = ::read(fd, chunk, sizeof chunk);
  if (n > 0) buf.append(chunk, static_cast<size_t>(n));
  size_t nl;
  while ((nl = buf.find('\n')) != std::string::npos) {
    emit(buf.substr(0, nl));
    buf.erase(0, nl + 1);
  }
  if (n <= 0) {  // end of file (or error): the rest, then close
    if (!buf.empty()) emit(buf), buf.clear();
    ::close(fd);
    fd = -1;
  }
  std::fflush(to);
}

class Job {
 public:
  Job(const LaunchOptions& opt, int wake_read, const Round& round) : opt_(opt), round_(round), wake_read_(wake_read) {
    for (int i = 0; i < opt.nproc; ++i) ranks_.push_back(start_rank(opt, round, i));
  }
  RoundResult run();

 private:
  void signal_all(int sig) {
    for (auto& r : ranks_)
      if (!r.status) ::kill(-r.pid, sig);
  }
  void reap();
  void close_drained();
  void stop_others(const Rank& failed);
  void stop_all(const std::string& why);
  void report_failure();
  bool all_done() const {
    for (const auto& r : ranks_)
      if (!r.status || r.out >= 0 || r.err >= 0) return false;
    return true;
  }

  const LaunchOptions& opt_;
  const Round& round_;
  int wake_read_;
  std::vector<Rank> ranks_;
  std::optional<std::chrono::steady_clock::time_point> kill_at_;
  RoundResult result_;
  const Rank* failed_ = nullptr;  // this node's first failing rank
  bool reported_ = false;         // round_.on_failure called
  bool stopping_ = false;         // every rank has been told to stop
};

void Job::reap() {
  for (auto& r : ranks_) {
    if (r.status) continue;
    int st = 0;
    if (::waitpid(r.pid, &st, WNOHANG) != r.pid) continue;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.exited_at = std::chrono::steady_clock::now();
    ::kill(-r.pid, SIGTERM);  // what the rank started and left running goes with it
    if (*r.status != 0 && !failed_) stop_others(r);
  }
}

void Job::close_drained() {
  const auto now = std::chrono::steady_clock::now();
  for (auto& r : ranks_) {
    if (!r.status || now - r.exited_at < kDrainAfterExit) continue;
    for (int* fd : {&r.out, &r.err})  // what is in the pipe now still gets printed
      if (*fd >= 0) ::fcntl(*fd, F_SETFL, ::fcntl(*fd, F_GETFL) | O_NONBLOCK);
    for (int reads = 0; reads < 256 && (r.out >= 0 || r.err >= 0); ++reads) {  // bounded: a writer may not stop
      if (r.out >= 0) pump(r.out, r.out_buf, stdout, r);
      if (r.err >= 0) pump(r.err, r.err_buf, stderr, r);
    }
    if (r.out >= 0) ::close(r.out), r.out = -1;
    if (r.err >= 0) ::close(r.err), r.err = -1;
  }
}

void Job::stop_others(const Rank& failed) {
  failed_ = &failed;
  result_.status = *failed.status;
  const std::string how = *failed.status > 128 ? fmt::format("was killed by signal {}", *failed.status - 128)
                                               : fmt::format("exited with code {}", *failed.status);
  result_.cause = fmt::format("rank {} {}", failed.rank, how);
  std::fprintf(stderr, "ember launch: rank %d %s%s\n", failed.rank, how.c_str(),
               opt_.nproc > 1 ? "; stopping the other ranks" : "");
  stop_all("");
}

void Job::stop_all(const std::string& why) {
  if (stopping_) return;
  stopping_ = true;
  if (!why.empty()) std::fprintf(stderr, "ember launch: stopping this node's ranks: %s\n", why.c_str());
  signal_all(SIGTERM);
  if (!kill_at_) kill_at_ = deadline(opt_.grace_s);
}

// The failing rank's cause goes out once its pipes are drained: its last error line is part of it.
void Job::report_failure() {
  if (!failed_ || reported_ || failed_->out >= 0 || failed_->err >= 0) return;
  reported_ = true;
  if (!failed_->last_error.empty()) result_.cause += ": " + failed_->last_error;
  if (round_.on_failure) round_.on_failure(result_.cause);
}

RoundResult Job::run() {
  bool forwarded = false;
  while (!all_done()) {
    std::vector<pollfd> fds;
    fds.push_back({wake_read_, POLLIN, 0});
    for (auto& r : ranks_) {
      if (r.out >= 0) fds.push_back({r.out, POLLIN, 0});
      if (r.err >= 0) fds.push_back({r.err, POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), 100);
    if (fds[0].revents & POLLIN) {
      char drain[16];
      [[maybe_unused]] auto n = ::read(wake_read_, drain, sizeof drain);
    }
    if (g_forward_signal && !forwarded) {  // preemption or Ctrl-C: every rank hears it
      forwarded = result_.interrupted = true;
      std::fprintf(stderr, "ember launch: forwarding signal %d to every rank\n", static_cast<int>(g_forward_signal));
      signal_all(g_forward_signal);
      kill_at_ = deadline(opt_.grace_s);
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      for (auto& r : ranks_) {
        if (fds[i].fd == r.out)
          pump(r.out, r.out_buf, stdout, r);
        else if (fds[i].fd == r.err)
          pump(r.err, r.err_buf, stderr, r);
      }
    }
    reap();
    close_drained();
    report_failure();
    if (!stopping_ && round_.stop_cause)
      if (auto why = round_.stop_cause()) {
        if (result_.cause.empty()) result_.cause = *why;
        stop_all(*why);
      }
    if (kill_at_ && std::chrono::steady_clock::now() > *kill_at_) {
      std::fprintf(stderr, "ember launch: ranks still running after %.0f s: killing them\n", opt_.grace_s);
      signal_all(SIGKILL);
      kill_at_.reset();
    }
  }
  report_failure();
  return result_;
}

}  // namespace

int free_port(bool any) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(any ? INADDR_ANY : INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw Error(std::string("ember launch: cannot find a free port: ") + std::strerror(errno));
  ::close(s);
  return ntohs(a.sin_port);
}

RoundResult run_round(const LaunchOptions& opt, int wake_read, const Round& round) {
  Job job(opt, wake_read, round);
  return job.run();
}

std::pair<std::string, int> parse_host_port(const std::string& text, const std::string& flag) {
  const auto colon = text.rfind(':');
  int port = 0;
  if (colon != std::string::npos && colon > 0) {
    try {
      size_t used = 0;
      port = std::stoi(text.substr(colon + 1), &used);
      if (used != text.size() - colon - 1) port = 0;
    } catch (const std::exception&) {
      port = 0;
    }
  }
  if (port < 1 || port > 65535) throw UsageError(flag + ": expected HOST:PORT, got '" + text + "'");
  return {text.substr(0, colon), port};
}

int launch(const LaunchOptions& given) {
  LaunchOptions opt = given;
  if (opt.command.empty()) throw UsageError("ember launch: no command to run (put it after --)");
  if (opt.nproc < 1) throw UsageError("ember launch: -n must be >= 1");
  if (opt.nnodes < 1 || opt.node_rank < 0 || opt.node_rank >= opt.nnodes)
    throw UsageError(fmt::format("ember launch: --node-rank {} outside [0, --nnodes {})", opt.node_rank, opt.nnodes));
  if (opt.nnodes > 1 && opt.master_port == 0)
    throw UsageError("ember launch: --master HOST:PORT is required with --nnodes > 1");
  if (opt.max_restarts < 0) throw UsageError("ember launch: --max-restarts must be >= 0");
  if (opt.master_port == 0) opt.master_port = free_port(false);
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) throw Error(std::string("ember launch: pipe: ") + std::strerror(errno));
  g_wake_fd = wake[1];
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  int status = 0;
  if (opt.max_restarts > 0) {
    status = run_elastic(opt, wake[0]);
  } else {
    Round once;
    once.master_port = opt.master_port;
    status = run_round(opt, wake[0], once).status;
  }
  ::close(wake[0]), ::close(wake[1]);
  return status;
}

}  // namespace ember
