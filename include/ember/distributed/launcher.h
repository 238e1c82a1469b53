// `ember launch`: starts this node's ranks of a job as child processes with the torchrun
// environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), prefixes
// every line they print with "[rank R] ", forwards SIGINT / SIGTERM to all of them, and when one
// exits non-zero stops the others (SIGTERM, then SIGKILL after the grace period). No process is
// left behind: each rank runs in a process group of its own, which is what gets signalled.
#pragma once
#include <string>
#include <vector>

namespace ember {

struct LaunchOptions {
  int nproc = 1;                       // ranks on this node
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;                 // 0: a free port of this machine (one node only)
  double grace_s = 30.0;               // after a stop signal, before SIGKILL
  std::vector<std::string> command;    // "ember" as the first word means this executable
};

// Runs the job; returns the exit status for the launcher: 0 when every rank exited 0, else the
// first failing rank's code (128 + signal when killed). Throws UsageError on bad options.
int launch(const LaunchOptions& opt);

// "host:port" -> (host, port); UsageError naming `flag` otherwise.
std::pair<std::string, int> parse_host_port(const std::string& text, const std::string& flag);

}  // namespace ember
