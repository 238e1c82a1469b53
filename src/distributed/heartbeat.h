// Private to src/distributed: the ranks' heartbeats, watched all the time a job runs.
//
// Each rank bumps its counter in the store once a `period` (a second) and reads every rank's counter in the same
// round trip (one multiGet), from a thread of its own and, over TCP, a store connection of its own.
// A second thread looks at what the first saw once a period: a peer whose counter stood still for
// `watch_timeout`, or a store that did not answer for that long (the master's host is gone or cut
// off), is reported through `on_lost` with one line that names it. A rank that ends normally adds
// kFinished to its counter, so that its peers do not report it. watch_timeout 0: beat only.
#pragma once
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ember {

std::string heartbeat_key(int rank);

struct HeartbeatOptions {
  int rank = 0, world = 1;
  std::chrono::milliseconds watch_timeout{0};  // 0: beat, do not watch (a run's is whole seconds)
  std::chrono::milliseconds period{1000};  // between beats, and between looks of the watch (the unit
                                           // tests beat faster to time out sooner)
  std::chrono::milliseconds last_beat_wait{3000};  // the longest the destructor waits for its last beat
  std::string store_address;              // "host:port" of the store, for the message
  std::vector<std::string> hosts;         // each rank's "address (host name)", for the message
};

class Heartbeat {
 public:
  static constexpr int64_t kFinished = int64_t{1} << 40;  // added to a counter by a rank that ended normally

  Heartbeat(c10::intrusive_ptr<c10d::Store> store, HeartbeatOptions opt,
            std::function<void(const std::string&)> on_lost);
  ~Heartbeat();  // marks this rank finished; waits at most last_beat_wait for a store that does not answer
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace ember
