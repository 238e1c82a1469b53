// `ember launch`: this node's ranks of a distributed job (library: dist/launcher.h).
#include "cli/commands.h"
#include "ember/distributed/launcher.h"

namespace ember::cli {

void register_launch(CLI::App& app) {
  auto* cmd = app.add_subcommand("launch", "Start N ranks of a distributed job on this node (like torchrun)");
  cmd->footer(
      "Every rank gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT; its\n"
      "output lines are prefixed with [rank R]. SIGINT/SIGTERM go to every rank; when one rank exits\n"
      "non-zero the others are stopped and launch exits non-zero. With --max-restarts N a failure on any\n"
      "node (an exit, kill -9, a lost peer) stops every node's ranks; the launchers meet again through a\n"
      "store at --master and restart them all, `ember train` with --resume, up to N times.\n"
      "Examples:\n"
      "  ember launch -n 2 -- ember train -c configs/tiny.yaml\n"
      "  ember launch -n 8 --nnodes 4 --node-rank $NODE --master node001:29500 -- ember train -c job.yaml\n"
      "  ember launch -n 8 --nnodes 4 --node-rank $NODE --master node001:29500 --max-restarts 3 -- ember train ...");
  auto opt = std::make_shared<LaunchOptions>();
  auto master = std::make_shared<std::string>();
  cmd->add_option("-n,--nproc", opt->nproc, "Ranks on this node")->required()->check(kPositive);
  cmd->add_option("--nnodes", opt->nnodes, "Nodes in the job (default 1)")->check(kPositive);
  cmd->add_option("--node-rank", opt->node_rank, "This node's index in [0, nnodes) (default 0)");
  cmd->add_option("--master", *master, "HOST:PORT of rank 0's store (default: a free port on 127.0.0.1)");
  cmd->add_option("--grace", opt->grace_s, "Seconds ranks get to stop after a signal before SIGKILL (default 30)")
      ->check(kNonNegative);
  cmd->add_option("--max-restarts", opt->max_restarts,
                  "Restart every node's ranks after a failure, up to N times (default 0)")
      ->check(kNonNegative);
  cmd->add_option("--rdzv-timeout", opt->rdzv_timeout_s,
                  "With --max-restarts: seconds a launcher waits for the other nodes' launchers (default 300)")
      ->check(kPositive);
  cmd->add_option("command", opt->command, "The command each rank runs, after --");
  cmd->callback([opt, master] {
    if (!master->empty()) std::tie(opt->master_addr, opt->master_port) = parse_host_port(*master, "--master");
    const int status = launch(*opt);
    if (status != 0) std::exit(status);
  });
}

}  // namespace ember::cli
