// ctest gpu.nccl_collectives (label gpu): ember's Communicator over ProcessGroupNCCL on this
// machine's GPUs, ranks as threads of this process (one GPU each, 1 or 2 of them) rendezvousing
// through a TCPStore on loopback: all-reduce (blocking and async), broadcast, the scalar sums and
// a barrier give the closed-form results. `ember train` only builds a process group when the world
// is larger than 1, so on a one-GPU machine this is the NCCL smoke test. Exit 77 (ctest's skip
// code) without a CUDA device; 1 when a device is there but the build has no NCCL.
#include <torch/cuda.h>

#include <unistd.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "ember/distributed/communicator.h"
#include "tests/gpu/gpu_precondition.h"

namespace {

bool check(bool ok, const std::string& what, int rank) {
  if (!ok) std::cout << "rank " << rank << ": FAIL: " << what << "\n";
  return ok;
}

bool run_rank(int rank, int world, int port) {
  ember::DistEnv env;
  env.rank = rank, env.world = world, env.local_rank = rank, env.local_world = world, env.master_port = port;
  ember::ConnectOptions connect;
  connect.timeout = std::chrono::seconds(120);
  auto comm = ember::Communicator::connect(env, ember::Backend::nccl, connect);
  const auto on_gpu = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, rank);
  const double ranks_sum = world * (world + 1) / 2.0;  // sum of (rank + 1)
  bool ok = check(comm->backend_name() == "nccl", "backend is " + comm->backend_name(), rank);

  auto t = at::full({1 << 20}, rank + 1.0, on_gpu);
  comm->all_reduce_sum(t);
  ok = check(t.eq(ranks_sum).all().item<bool>(), "all_reduce_sum", rank) && ok;

  auto a = at::full({4096}, 2.0 * (rank + 1), on_gpu);
  auto pending = comm->all_reduce_sum_async(a);
  pending.wait();
  ok = check(a.eq(2.0 * ranks_sum).all().item<bool>(), "all_reduce_sum_async", rank) && ok;

  auto b = at::full({1000}, rank == 0 ? 7.0 : -1.0, on_gpu);
  comm->broadcast({b}, 0);
  ok = check(b.eq(7.0).all().item<bool>(), "broadcast from rank 0", rank) && ok;

  ok = check(comm->sum(rank + 1.0) == ranks_sum, "sum(double)", rank) && ok;
  ok = check(comm->any(rank == world - 1), "any(flag)", rank) && ok;
  comm->barrier();
  return ok;
}

}  // namespace

int main() {
  if (const int rc = gpu_precondition("gpu.nccl_collectives")) return rc;
  const int world = torch::cuda::device_count() >= 2 ? 2 : 1;
  const int port = 20000 + static_cast<int>(getpid() % 20000);
  std::atomic<bool> ok{true};
  std::vector<std::string> errors(world);
  try {
    std::vector<std::thread> ranks;
    for (int r = 0; r < world; ++r)
      ranks.emplace_back([&, r] {
        try {
          if (!run_rank(r, world, port)) ok = false;
        } catch (const std::exception& e) {
          errors[r] = e.what();
          ok = false;
        }
      });
    for (auto& t : ranks) t.join();
    for (int r = 0; r < world; ++r)
      if (!errors[r].empty()) std::cout << "rank " << r << ": " << errors[r] << "\n";
  } catch (const std::exception& e) {
    std::cout << "FAIL: " << e.what() << "\n";
    return 1;
  }
  for (const auto& e : errors)
    if (e.find("without CUDA") != std::string::npos) {
      std::cout << "FAIL: a CUDA device but this build has no NCCL backend (configure with a CUDA LibTorch)\n";
      return 1;
    }
  std::cout << (ok ? "OK" : "FAIL") << ": NCCL collectives over " << world << " GPU rank(s)\n";
  return ok ? 0 : 1;
}
