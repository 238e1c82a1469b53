// `ember launch --max-restarts N` (torchrun's meaning). Each round every node's launcher joins the
// round in a store at --master (node 0's launcher serves it; one node needs none), node 0 picks the
// ranks' MASTER_PORT, and the ranks start (`ember train` with --resume after the first round). The
// first failure on any node is written to the store; every launcher sees it, stops its ranks and
// joins the next round, until a round ends well or N restarts are spent.
#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

#include "ember/util/error.h"
#include "launch_round.h"

namespace ember {
namespace {

std::vector<uint8_t> to_bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string from_bytes(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }
std::string one_line(const std::exception& e) {
  const std::string s = e.what();
  return s.substr(0, s.find('\n'));
}

std::string round_key(int round, const char* what) { return fmt::format("ember/launch/{}/{}", round, what); }

// What a round's watcher thread shares with the launcher's loop. The thread alone talks to the
// store, so that a store behind a cut link never holds the loop that reads the ranks' output.
struct FailureWatch {
  c10::intrusive_ptr<c10d::Store> store;
  std::string key, own_prefix;  // the round's failure key; "node R: "
  std::mutex mu;
  std::condition_variable wake;
  std::optional<std::string> to_publish, seen, lost;
  bool stop = false, ended = false;

  void loop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      auto publish = std::exchange(to_publish, std::nullopt);
      const bool last = stop;  // a failure handed over as the round ended still goes out
      lock.unlock();
      std::optional<std::string> now_seen, error;
      try {
        if (publish) store->compareSet(key, {}, to_bytes(*publish));  // the first failure of the job wins
        if (store->check({key})) now_seen = from_bytes(store->get(key));
      } catch (const std::exception& e) {
        error = one_line(e);
      }
      lock.lock();
      if (now_seen) seen = now_seen;
      if (error) lost = error;
      if (error || (last && !to_publish)) break;
      wake.wait_for(lock, std::chrono::milliseconds(200), [&] { return stop || to_publish.has_value(); });
    }
    ended = true;
    wake.notify_all();
  }
};

class LaunchStore {
 public:
  explicit LaunchStore(const LaunchOptions& opt) : opt_(opt) {
    if (opt.nnodes == 1) return;
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(opt.master_port);
    so.isServer = opt.node_rank == 0;
    so.waitWorkers = false;
    so.timeout = timeout();
    try {
      store_ = c10::make_intrusive<c10d::TCPStore>(opt.master_addr, so);
    } catch (const std::exception& e) {
      throw Error(fmt::format("ember launch: node {} cannot reach the launchers' store at {} within {} s: {}",
                              opt.node_rank, where(), opt.rdzv_timeout_s, one_line(e)));
    }
  }

  int join(int round);
  void finish(int round);
  std::shared_ptr<FailureWatch> watch(int round);
  std::optional<std::string> first_failure(int round);
  std::string where() const { return fmt::format("{}:{}", opt_.master_addr, opt_.master_port); }

 private:
  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<int64_t>(opt_.rdzv_timeout_s * 1000));
  }
  const LaunchOptions& opt_;
  c10::intrusive_ptr<c10d::Store> store_;
};

int LaunchStore::join(int round) {
  if (!store_) return round == 0 ? opt_.master_port : free_port(false);
  try {
    store_->add(round_key(round, "joined"), 1);
    if (opt_.node_rank == 0) {  // all here: a port for this round's ranks, free on the master's host
      const auto until = std::chrono::steady_clock::now() + timeout();
      while (store_->add(round_key(round, "joined"), 0) < opt_.nnodes) {
        if (std::chrono::steady_clock::now() > until)
          throw Error(fmt::format("ember launch: {} of {} nodes' launchers came to start {} within {} s "
                                  "(--rdzv-timeout)",
                                  store_->add(round_key(round, "joined"), 0), opt_.nnodes,
                                  round == 0 ? std::string("the job") : fmt::format("restart {}", round),
                                  opt_.rdzv_timeout_s));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      store_->set(round_key(round, "port"), to_bytes(std::to_string(free_port(true))));
    }
    store_->wait({round_key(round, "port")}, timeout());
    return std::stoi(from_bytes(store_->get(round_key(round, "port"))));
  } catch (const c10::Error& e) {
    throw Error(fmt::format("ember launch: node {}: the launchers did not meet at {} for {} within {} s: {}",
                            opt_.node_rank, where(), round == 0 ? std::string("the job") : fmt::format("restart {}", round),
                            opt_.rdzv_timeout_s, one_line(e)));
  }
}

// Node 0's launcher serves the store: it stays until every node has seen the round end well.
void LaunchStore::finish(int round) {
  if (!store_) return;
  try {
    store_->add(round_key(round, "finished"), 1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (opt_.node_rank == 0 && store_->add(round_key(round, "finished"), 0) < opt_.nnodes &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } catch (const std::exception&) {
  }
}

std::shared_ptr<FailureWatch> LaunchStore::watch(int round) {
  if (!store_) return nullptr;
  auto w = std::make_shared<FailureWatch>();
  w->store = store_;
  w->key = round_key(round, "failed");
  w->own_prefix = fmt::format("node {}: ", opt_.node_rank);
  std::thread([w] { w->loop(); }).detach();  // the thread holds the watch: a stuck one outlives the round
  return w;
}

std::optional<std::string> LaunchStore::first_failure(int round) {
  if (!store_) return std::nullopt;
  try {
    if (store_->check({round_key(round, "failed")})) return from_bytes(store_->get(round_key(round, "failed")));
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// Ends the round's watch; what it saw stays readable. A thread stuck in the store is left behind.
void end_watch(const std::shared_ptr<FailureWatch>& w) {
  if (!w) return;
  std::unique_lock<std::mutex> lock(w->mu);
  w->stop = true;
  w->wake.notify_all();
  w->wake.wait_for(lock, std::chrono::seconds(2), [&] { return w->ended; });
}

}  // namespace

int run_elastic(const LaunchOptions& opt, int wake_read) {
  LaunchStore store(opt);
  for (int round = 0;; ++round) {
    Round r;
    r.master_port = store.join(round);
    r.restart = round;
    const auto watch = store.watch(round);
    if (watch) {
      r.on_failure = [&](const std::string& cause) {
        std::lock_guard<std::mutex> lock(watch->mu);
        watch->to_publish = watch->own_prefix + cause;
        watch->wake.notify_all();
      };
      r.stop_cause = [&]() -> std::optional<std::string> {
        std::lock_guard<std::mutex> lock(watch->mu);
        if (watch->lost) return fmt::format("lost the launchers' store at {}: {}", store.where(), *watch->lost);
        if (watch->seen && watch->seen->rfind(watch->own_prefix, 0) != 0) return watch->seen;
        return std::nullopt;
      };
    }
    const RoundResult result = run_round(opt, wake_read, r);
    end_watch(watch);
    std::optional<std::string> lost;
    if (watch) {
      std::lock_guard<std::mutex> lock(watch->mu);
      lost = watch->lost;
    }
    const auto first = lost ? std::nullopt : store.first_failure(round);
    if (result.status == 0 && !first && !lost) {
      store.finish(round);
      return 0;
    }
    const int status = result.status != 0 ? result.status : 1;
    if (result.interrupted) return status;  // preempted or stopped by hand: not a failure to retry
    const std::string cause = first ? *first : fmt::format("node {}: {}", opt.node_rank, result.cause);
    if (lost) {
      std::fprintf(stderr, "ember launch: node %d: lost the launchers' store at %s (%s): cannot restart after %s\n",
                   opt.node_rank, store.where().c_str(), lost->c_str(), cause.c_str());
      return status;
    }
    if (round >= opt.max_restarts) {
      std::fprintf(stderr, "ember launch: no restart left (--max-restarts %d) after %s\n", opt.max_restarts,
                   cause.c_str());
      return status;
    }
    std::fprintf(stderr, "ember launch: restart %d of %d after %s\n", round + 1, opt.max_restarts, cause.c_str());
    std::fflush(stderr);
  }
}

}  // namespace ember
