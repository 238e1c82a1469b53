// Private to src/dist: what a Communicator and a PendingOp hold.
#pragma once
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "ember/dist/communicator.h"

namespace ember {

struct Communicator::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;
  at::Device device = at::kCPU;  // where the backend wants tensors (CUDA for NCCL)
  std::chrono::seconds timeout{600};
};

struct PendingOp::Impl {
  c10::intrusive_ptr<c10d::Work> work;
  std::string what;
  int rank = 0;
  std::chrono::seconds timeout{600};
};

struct InProcessStore::Impl {
  c10::intrusive_ptr<c10d::Store> store;
};

// NCCL lives in its own translation unit (src/dist/nccl_backend.cpp), built only with CUDA.
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                    int world, std::chrono::seconds timeout);

}  // namespace ember
