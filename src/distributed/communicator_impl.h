// Private to src/distributed: what a Communicator and a PendingOp hold.
#pragma once
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/communicator.h"
#include "heartbeat.h"

namespace ember {

struct Communicator::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;
  at::Device device = at::kCPU;  // where the backend wants tensors (CUDA for NCCL)
  std::chrono::seconds timeout{600};
  int rank = 0, world = 1;

  // Every rank beats (heartbeat.h): a peer or a store that goes silent for heartbeat_timeout ends the
  // rank by itself, and after a failed collective the survivors can tell which ranks went silent.
  std::unique_ptr<Heartbeat> heartbeat;
  std::chrono::milliseconds beat_period{1000};  // the heartbeats' (HeartbeatOptions::period)
  std::string silent_ranks();  // "" when every rank still beats
};

struct PendingOp::Impl {
  c10::intrusive_ptr<c10d::Work> work;
  std::string what;
  Communicator::Impl* comm = nullptr;  // outlives its pending operations
};

struct InProcessStore::Impl {
  c10::intrusive_ptr<c10d::Store> store;
};

// NCCL lives in its own translation unit (src/distributed/nccl_backend.cpp), built only with CUDA.
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                    int world, std::chrono::seconds timeout);

}  // namespace ember
