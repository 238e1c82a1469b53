// The collectives ember's trainer needs, over a LibTorch c10d process group: ProcessGroupGloo on
// CPUs, ProcessGroupNCCL on GPUs, rendezvous through a TCPStore served by rank 0. The c10d headers
// stay in src/distributed/; a failed or timed-out collective becomes an ember::Error that says which
// operation, on which rank, and that a peer rank died or stalled.
#pragma once
#include <ATen/ATen.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ember/config/distributed_config.h"
#include "ember/distributed/environment.h"

namespace ember {

class PendingOp {  // an asynchronous collective; wait() before reading its tensors
 public:
  struct Impl;
  PendingOp() = default;
  explicit PendingOp(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  void wait();
  bool active() const { return impl_ != nullptr; }

 private:
  std::shared_ptr<Impl> impl_;
};

// A key-value store several communicators of one process share (tests: ranks as threads).
class InProcessStore {
 public:
  InProcessStore();
  struct Impl;
  std::shared_ptr<Impl> impl;
};

struct ConnectOptions {
  std::chrono::seconds timeout{600};           // the rendezvous and each collective (distributed.timeout_s)
  std::chrono::seconds heartbeat_timeout{30};  // a silent peer or store ends the rank (0: not watched)
  std::string interface;                       // distributed.interface; "": the route to the master
};

class Communicator {
 public:
  // Rendezvous at env.master_addr:master_port (rank 0 serves the store). Each rank advertises the
  // address that routes to the master unless GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME or
  // opt.interface names an interface (src/distributed/advertise.h). A rank whose peer stops beating,
  // or whose store stops answering, for opt.heartbeat_timeout prints one line naming it, aborts the
  // process group and exits 1, whatever the rank is doing (src/distributed/heartbeat.h).
  static std::unique_ptr<Communicator> connect(const DistEnv& env, Backend backend, const ConnectOptions& opt);
  // A Gloo group over an in-process store: ranks are threads of this process (tests; they beat
  // faster than the 1 s of a job to name a silent rank sooner).
  static std::unique_ptr<Communicator> in_process(const InProcessStore& store, int rank, int world,
                                                  std::chrono::seconds timeout,
                                                  std::chrono::milliseconds beat_period = std::chrono::milliseconds(1000));
  ~Communicator();

  int rank() const { return rank_; }
  int world() const { return world_; }
  const std::string& backend_name() const { return backend_name_; }
  at::Device device() const;  // where the backend takes tensors (CUDA for NCCL, else the CPU)

  PendingOp all_reduce_sum_async(at::Tensor t);  // in place
  void all_reduce_sum(at::Tensor t);
  void broadcast(std::vector<at::Tensor> tensors, int root);  // in place, one collective each
  void barrier();
  double sum(double x);          // over ranks
  bool any(bool flag);           // true when any rank's flag is
  std::vector<double> sum(std::vector<double> xs);

  struct Impl;

 private:
  Communicator(std::unique_ptr<Impl> impl, int rank, int world, std::string backend);
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, world_ = 1;
  std::string backend_name_;
};

}  // namespace ember
