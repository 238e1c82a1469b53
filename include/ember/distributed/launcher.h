// `ember launch`: starts this node's ranks of a job as child processes with the torchrun
// environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), prefixes
// every line they print with "[rank R] ", forwards SIGINT / SIGTERM to all of them, and when one
// exits non-zero stops the others (SIGTERM, then SIGKILL after the grace period). No process is
// left behind: each rank runs in a process group of its own, which is what gets signalled.
// With --max-restarts N a failure (a rank's exit, kill -9, a lost peer) on any node stops every
// node's ranks; the launchers meet again through a store at --master (node 0's launcher serves it)
// and restart all ranks, `ember train` with --resume, up to N times (src/distributed/elastic.cpp).
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
  int max_restarts = 0;                // torchrun's meaning: restarts of every node's ranks after a failure
  double rdzv_timeout_s = 300.0;       // --max-restarts: how long a launcher waits for the other nodes' ones
  std::vector<std::string> command;    // "ember" as the first word means this executable
};

// Runs the job; returns the exit status for the launcher: 0 when every rank exited 0, else the
// first failing rank's code (128 + signal when killed). Throws UsageError on bad options.
int launch(const LaunchOptions& opt);

// "host:port" -> (host, port); UsageError naming `flag` otherwise.
std::pair<std::string, int> parse_host_port(const std::string& text, const std::string& flag);

}  // namespace ember
