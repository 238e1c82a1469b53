#include <torch/cuda.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "advertise.h"
#include "communicator_impl.h"
#include "ember/util/error.h"
#include "ember/util/log.h"

namespace ember {
namespace {

// The error of a failed collective in one line: which one, where, which ranks went silent, why.
[[noreturn]] void collective_failed(const std::string& what, Communicator::Impl& comm, const std::exception& e) {
  std::string cause = e.what();
  cause = cause.substr(0, cause.find('\n'));
  std::string silent = comm.silent_ranks();
  if (silent.empty()) silent = "a peer rank exited or stalled for more than distributed.timeout_s";
  throw Error(fmt::format("distributed: {} failed on rank {}: {} (timeout {} s): {}", what, comm.rank, silent,
                          comm.timeout.count(), cause));
}

c10::intrusive_ptr<c10d::Backend> make_gloo(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                                            std::chrono::seconds timeout, const std::vector<LocalAddress>& addresses) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  for (const auto& a : addresses) options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(a.address));
  options->threads = 2;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options);
}

std::string host_key(int rank) { return "ember/host/" + std::to_string(rank); }

void publish_host(c10d::Store& store, int rank, const Advertised& adv) {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  const std::string text = fmt::format("{} on host {}", adv.addresses.empty() ? "?" : adv.addresses[0].address, name);
  store.set(host_key(rank), std::vector<uint8_t>(text.begin(), text.end()));
}

std::vector<std::string> read_hosts(c10d::Store& store, int world) {
  std::vector<std::string> keys, hosts;
  for (int r = 0; r < world; ++r) keys.push_back(host_key(r));
  for (const auto& v : store.multiGet(keys)) hosts.emplace_back(v.begin(), v.end());
  return hosts;
}

// "rank 0 10.0.0.1 on host a, ranks 1-7 10.0.0.2 on host b": consecutive ranks of one host together.
std::string compress_hosts(const std::vector<std::string>& hosts) {
  std::string out;
  for (size_t i = 0; i < hosts.size();) {
    size_t j = i;
    while (j + 1 < hosts.size() && hosts[j + 1] == hosts[i]) ++j;
    out += (out.empty() ? "" : ", ") + (i == j ? fmt::format("rank {}", i) : fmt::format("ranks {}-{}", i, j)) + " " +
           hosts[i];
    i = j + 1;
  }
  return out;
}

// A lost peer or store: one line, the process group aborted (NCCL: its communicators, so that no
// kernel keeps waiting on the peer; Gloo has nothing to abort), then exit 1 at once: the collective
// this rank may be waiting in would otherwise last distributed.timeout_s.
[[noreturn]] void end_rank_for_lost_peer(const c10::intrusive_ptr<c10d::Backend>& backend, const std::string& lost) {
  std::fprintf(stderr, "ember: error: distributed: %s\n", lost.c_str());
  std::fflush(stderr);
  auto aborted = std::make_shared<std::promise<void>>();
  std::thread([backend, aborted] {
    try {
      backend->abort();
    } catch (const std::exception&) {
    }
    aborted->set_value();
  }).detach();
  aborted->get_future().wait_for(std::chrono::seconds(10));
  std::_Exit(1);
}

}  // namespace

// The ranks whose counters stand still for 3.5 beat periods (> 3 heartbeats), looked at every tenth
// of a period: as soon as every peer has beaten, none is silent (no waiting out the window).
std::string Communicator::Impl::silent_ranks() {
  auto read = [&] {
    std::vector<int64_t> beats;
    for (int r = 0; r < world; ++r) beats.push_back(store->add(heartbeat_key(r), 0));
    return beats;
  };
  try {
    const auto before = read();
    const auto until = std::chrono::steady_clock::now() + beat_period * 7 / 2;
    std::vector<bool> beat(static_cast<size_t>(world), false);
    beat[static_cast<size_t>(rank)] = true;
    while (std::count(beat.begin(), beat.end(), false) > 0 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::max(beat_period / 10, std::chrono::milliseconds(10)));
      const auto now = read();
      for (size_t r = 0; r < now.size(); ++r) beat[r] = beat[r] || now[r] != before[r];
    }
    std::string silent;
    for (int r = 0; r < world; ++r)
      if (!beat[static_cast<size_t>(r)]) silent += (silent.empty() ? "" : ", ") + std::to_string(r);
    if (silent.empty()) return "";
    return fmt::format("rank {} stopped beating (died or was stopped)", silent);
  } catch (const std::exception&) {
    return "the rendezvous store on rank 0 is unreachable (rank 0 died, or its node is gone)";
  }
}

void PendingOp::wait() {
  if (!impl_) return;
  auto impl = std::move(impl_);
  try {
    impl->work->wait();
  } catch (const std::exception& e) {
    collective_failed(impl->what, *impl->comm, e);
  }
}

InProcessStore::InProcessStore() : impl(std::make_shared<Impl>()) {
  impl->store = c10::make_intrusive<c10d::HashStore>();
}

Communicator::Communicator(std::unique_ptr<Impl> impl, int rank, int world, std::string backend)
    : impl_(std::move(impl)), rank_(rank), world_(world), backend_name_(std::move(backend)) {}

Communicator::~Communicator() = default;

std::unique_ptr<Communicator> Communicator::connect(const DistEnv& env, Backend backend, const ConnectOptions& opt) {
  const bool cuda = torch::cuda::is_available();
  if (backend == Backend::automatic) backend = cuda ? Backend::nccl : Backend::gloo;
  if (backend == Backend::nccl && !cuda)
    throw ConfigError("distributed.backend: nccl needs CUDA devices and none is available; use gloo");
  auto impl = std::make_unique<Impl>();
  impl->timeout = opt.timeout;
  impl->rank = env.rank;
  impl->world = env.world;
  c10d::TCPStoreOptions so;
  so.port = static_cast<uint16_t>(env.master_port);
  so.isServer = env.rank == 0;
  so.numWorkers = env.world;
  so.timeout = opt.timeout;
  Advertised adv;
  std::vector<std::string> hosts;
  c10::intrusive_ptr<c10d::Store> beat_store;
  try {
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    impl->store->add(heartbeat_key(env.rank), 0);  // exists before any peer reads it
    adv = choose_advertised(env, backend, opt.interface, *impl->store, opt.timeout);
    publish_host(*impl->store, env.rank, adv);
    if (backend == Backend::nccl) {
      impl->device = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
      impl->backend = make_nccl_backend(impl->store, env.rank, env.world, opt.timeout);
    } else {
      impl->backend = make_gloo(impl->store, env.rank, env.world, opt.timeout, adv.addresses);
    }
    hosts = read_hosts(*impl->store, env.world);
    // The heartbeats' own connection: a beat stuck on a cut link holds no lock the trainer needs.
    c10d::TCPStoreOptions bo;
    bo.port = so.port;
    bo.isServer = false;
    bo.waitWorkers = false;
    bo.timeout = opt.timeout;
    beat_store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, bo);
  } catch (const c10::Error& e) {
    std::string cause = e.what();
    throw Error(fmt::format("distributed: rank {} of {} could not join the job at {}:{} within {} s: {}", env.rank,
                            env.world, env.master_addr, env.master_port, opt.timeout.count(),
                            cause.substr(0, cause.find('\n'))));
  }
  log::info("distributed: {} ({}); a peer or store silent for {} s ends the job (distributed.heartbeat_timeout_s)",
            compress_hosts(hosts), adv.rule, opt.heartbeat_timeout.count());
  HeartbeatOptions ho;
  ho.rank = env.rank;
  ho.world = env.world;
  ho.watch_timeout = opt.heartbeat_timeout;
  ho.store_address = fmt::format("{}:{}", env.master_addr, env.master_port);
  ho.hosts = hosts;
  impl->heartbeat = std::make_unique<Heartbeat>(beat_store, ho, [backend = impl->backend](const std::string& lost) {
    end_rank_for_lost_peer(backend, lost);
  });
  const std::string name = backend == Backend::nccl ? "nccl" : "gloo";
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl), env.rank, env.world, name));
}

std::unique_ptr<Communicator> Communicator::in_process(const InProcessStore& store, int rank, int world,
                                                       std::chrono::seconds timeout,
                                                       std::chrono::milliseconds beat_period) {
  auto impl = std::make_unique<Impl>();
  impl->timeout = timeout;
  impl->store = store.impl->store;
  impl->store->add(heartbeat_key(rank), 0);
  impl->backend = make_gloo(impl->store, rank, world, timeout, {LocalAddress{"127.0.0.1", "lo"}});
  impl->rank = rank;
  impl->world = world;
  HeartbeatOptions ho;  // beating only: the threads of one test process are not ended by a watch
  ho.rank = rank;
  ho.world = world;
  ho.period = impl->beat_period = beat_period;
  impl->heartbeat = std::make_unique<Heartbeat>(impl->store, ho, [](const std::string&) {});
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl), rank, world, "gloo"));
}

PendingOp Communicator::all_reduce_sum_async(at::Tensor t) {
  std::vector<at::Tensor> ts{std::move(t)};
  auto op = std::make_shared<PendingOp::Impl>();
  op->what = "all-reduce";
  op->comm = impl_.get();
  try {
    op->work = impl_->backend->allreduce(ts);
  } catch (const std::exception& e) {
    collective_failed(op->what, *impl_, e);
  }
  return PendingOp(op);
}

void Communicator::all_reduce_sum(at::Tensor t) { all_reduce_sum_async(std::move(t)).wait(); }

void Communicator::broadcast(std::vector<at::Tensor> tensors, int root) {
  c10d::BroadcastOptions o;
  o.rootRank = root;
  for (auto& t : tensors) {
    std::vector<at::Tensor> one{t};
    try {
      impl_->backend->broadcast(one, o)->wait();
    } catch (const std::exception& e) {
      collective_failed("broadcast", *impl_, e);
    }
  }
}

void Communicator::barrier() {
  // A one-element all-reduce: a barrier that reports a dead peer like any collective. Reading the
  // result blocks the host: NCCL's wait() only orders the stream, and files written after a barrier
  // (ZeRO-1 shards, then the seal) need every rank past it.
  auto t = at::zeros({1}, at::TensorOptions().device(impl_->device));
  all_reduce_sum(t);
  (void)t.item<float>();
}

std::vector<double> Communicator::sum(std::vector<double> xs) {
  auto t = at::tensor(xs, at::kDouble).to(impl_->device);
  all_reduce_sum(t);
  t = t.cpu();
  return {t.data_ptr<double>(), t.data_ptr<double>() + t.numel()};
}

double Communicator::sum(double x) { return sum(std::vector<double>{x})[0]; }

bool Communicator::any(bool flag) { return sum(flag ? 1.0 : 0.0) > 0.0; }

at::Device Communicator::device() const { return impl_->device; }

}  // namespace ember
