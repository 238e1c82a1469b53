// Private to src/distributed: one start of this node's ranks under `ember launch` (launcher.cpp),
// and the restart loop of --max-restarts around such rounds (elastic.cpp).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "ember/distributed/launcher.h"

namespace ember {

struct Round {
  int master_port = 0;  // the ranks' MASTER_PORT
  int restart = 0;      // 0: the first start; > 0: `ember train` gets --resume, EMBER_RESTART_COUNT says which
  // Polled every ~100 ms while ranks run: a cause from elsewhere (another node's failure) stops them.
  std::function<std::optional<std::string>()> stop_cause;
  // Called once with what failed first ("rank 1 was killed by signal 9"), as soon as that rank's last
  // output is read (its last error line is part of it).
  std::function<void(const std::string&)> on_failure;
};

struct RoundResult {
  int status = 0;            // 0 when every rank exited 0, else the first failing rank's (128 + signal)
  std::string cause;         // what ended the round: this node's failing rank, or stop_cause's answer
  bool interrupted = false;  // the launcher itself was signalled (preemption, Ctrl-C): no restart
};

RoundResult run_round(const LaunchOptions& opt, int wake_read, const Round& round);

// A TCP port free on this machine now (on every address when `any`, else on loopback).
int free_port(bool any);

// --max-restarts: rounds until one ends well, restarts run out or the launcher is signalled.
int run_elastic(const LaunchOptions& opt, int wake_read);

}  // namespace ember
