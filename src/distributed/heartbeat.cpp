#include "heartbeat.h"

#include <fmt/format.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace ember {
namespace {

using beat_clock = std::chrono::steady_clock;

int64_t counter_value(const std::vector<uint8_t>& bytes) {
  try {
    return std::stoll(std::string(bytes.begin(), bytes.end()));
  } catch (const std::exception&) {
    return -1;
  }
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

std::string heartbeat_key(int rank) { return "ember/heartbeat/" + std::to_string(rank); }

struct Heartbeat::State {
  c10::intrusive_ptr<c10d::Store> store;
  HeartbeatOptions opt;
  std::function<void(const std::string&)> on_lost;
  std::mutex mu;
  std::condition_variable wake;
  bool stop = false, beat_done = false;
  beat_clock::time_point last_answer;        // the store's last answer to this rank
  std::string store_error;                   // why the store failed since then ("" if it did not)
  std::vector<int64_t> seen;                 // each rank's counter when last read
  std::vector<beat_clock::time_point> moved; // when each counter last changed

  std::string host(int r) const {
    return r < static_cast<int>(opt.hosts.size()) && !opt.hosts[r].empty() ? " at " + opt.hosts[r] : "";
  }
  void beat();
  void watch();
  std::string lost_now(beat_clock::time_point now);  // "" while every peer and the store answer
};

void Heartbeat::State::beat() {
  std::vector<std::string> keys;
  for (int r = 0; r < opt.world; ++r) keys.push_back(heartbeat_key(r));
  std::unique_lock<std::mutex> lock(mu);
  while (!stop) {
    lock.unlock();
    std::vector<int64_t> now_seen;
    std::string error;
    try {
      store->add(keys[opt.rank], 1);
      for (const auto& v : store->multiGet(keys)) now_seen.push_back(counter_value(v));
    } catch (const std::exception& e) {
      error = first_line(e.what());
    }
    lock.lock();
    const auto now = beat_clock::now();
    if (error.empty()) {
      last_answer = now;
      store_error.clear();
      for (int r = 0; r < opt.world; ++r)
        if (now_seen[r] != seen[r]) seen[r] = now_seen[r], moved[r] = now;
    } else {
      store_error = error;
    }
    wake.wait_for(lock, opt.period, [&] { return stop; });
  }
  lock.unlock();
  try {
    store->add(keys[opt.rank], kFinished);
  } catch (const std::exception&) {
  }
  lock.lock();
  beat_done = true;
  wake.notify_all();
}

std::string Heartbeat::State::lost_now(beat_clock::time_point now) {
  const auto limit = opt.watch_timeout;
  const auto secs = [](beat_clock::duration d) {  // whole seconds, as the config gives them; a test's less
    const double s = std::chrono::duration<double>(d).count();
    return s >= 1 ? fmt::format("{}", static_cast<int64_t>(s)) : fmt::format("{:.2g}", s);
  };
  const bool master_finished = seen[0] >= kFinished;
  if (now - last_answer > limit && !master_finished)
    return fmt::format("rank {} lost the store at {} (rank 0{}): no answer for {} s (distributed.heartbeat_timeout_s "
                       "{}){}",
                       opt.rank, opt.store_address, host(0), secs(now - last_answer), secs(limit),
                       store_error.empty() ? "" : ": " + store_error);
  // A peer is judged by the store's last answer: while the store is silent, what it says is stale.
  std::string lost;
  for (int r = 0; r < opt.world; ++r)
    if (r != opt.rank && seen[r] < kFinished && last_answer - moved[r] > limit)
      lost += fmt::format("{}rank {}{}", lost.empty() ? "" : ", ", r, host(r));
  if (lost.empty()) return "";
  return fmt::format("rank {} lost {}: no heartbeat for {} s (distributed.heartbeat_timeout_s {})", opt.rank, lost,
                     secs(limit), secs(limit));
}

void Heartbeat::State::watch() {
  std::unique_lock<std::mutex> lock(mu);
  while (!wake.wait_for(lock, opt.period, [&] { return stop; })) {
    const std::string lost = lost_now(beat_clock::now());
    if (lost.empty()) continue;
    lock.unlock();
    on_lost(lost);
    return;
  }
}

Heartbeat::Heartbeat(c10::intrusive_ptr<c10d::Store> store, HeartbeatOptions opt,
                     std::function<void(const std::string&)> on_lost)
    : state_(std::make_shared<State>()) {
  auto& s = *state_;
  s.store = std::move(store);
  s.opt = std::move(opt);
  s.on_lost = std::move(on_lost);
  s.last_answer = beat_clock::now();
  s.seen.assign(static_cast<size_t>(s.opt.world), -1);
  s.moved.assign(static_cast<size_t>(s.opt.world), s.last_answer);
  // The threads hold the state: a beat stuck on a store that does not answer outlives this object.
  std::thread([st = state_] { st->beat(); }).detach();
  if (s.opt.watch_timeout.count() > 0) std::thread([st = state_] { st->watch(); }).detach();
}

Heartbeat::~Heartbeat() {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->stop = true;
  state_->wake.notify_all();
  // The last beat (kFinished) normally takes a millisecond; a store that is gone does not hold the exit.
  state_->wake.wait_for(lock, state_->opt.last_beat_wait, [&] { return state_->beat_done; });
}

}  // namespace ember
