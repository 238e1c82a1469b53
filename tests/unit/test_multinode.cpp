// Multi-node plumbing (dist/): the address a rank advertises (the route to the master, an
// interface by name) and the heartbeat watch that ends a rank whose peer or store goes silent.
// Two hosts for real: tests/integration/multinode.sh.
#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <atomic>
#include <mutex>
#include <thread>

#include "ember/distributed/address.h"
#include "ember/util/error.h"
#include "src/distributed/heartbeat.h"

namespace {

using namespace std::chrono_literals;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "";
}

TEST(DistAddress, TheRouteToALoopbackMasterLeavesFromLoopback) {
  const auto r = ember::route_to("127.0.0.1", 29500);
  EXPECT_EQ(r.from.address, "127.0.0.1");
  EXPECT_EQ(r.from.interface, "lo");
  EXPECT_EQ(r.to, "127.0.0.1");
  EXPECT_TRUE(r.from.loopback());
  EXPECT_FALSE((ember::LocalAddress{"10.77.0.2", "veth1"}.loopback()));
  EXPECT_TRUE((ember::LocalAddress{"127.0.1.1", "lo"}.loopback()));
}

TEST(DistAddress, AMasterThatDoesNotResolveIsNamed) {
  const auto e = error_of([] { ember::route_to("no-such-host.invalid", 29500); });
  EXPECT_NE(e.find("cannot resolve the master address 'no-such-host.invalid'"), std::string::npos) << e;
}

TEST(DistAddress, AnInterfaceByNameAndTheErrorNamingItsSource) {
  const auto lo = ember::address_of_interface("lo", "GLOO_SOCKET_IFNAME");
  EXPECT_EQ(lo.address, "127.0.0.1");
  EXPECT_EQ(ember::interface_holding("127.0.0.1"), "lo");
  EXPECT_EQ(ember::interface_holding("192.0.2.77"), "");  // TEST-NET-1: held by no machine
  const auto e = error_of([] { ember::address_of_interface("nosuch0", "distributed.interface"); });
  EXPECT_NE(e.find("distributed.interface names the interface 'nosuch0', which does not exist"), std::string::npos)
      << e;
  EXPECT_EQ(ember::split_interfaces("eth0,ib0"), (std::vector<std::string>{"eth0", "ib0"}));
  EXPECT_EQ(ember::split_interfaces("eth0"), (std::vector<std::string>{"eth0"}));
}

// A store that stops answering while `cut` is set, as one across a cut link does.
struct CuttableStore : c10d::HashStore {
  std::atomic<bool> cut{false};
  void hold() {
    while (cut) std::this_thread::sleep_for(10ms);
  }
  int64_t add(const std::string& key, int64_t value) override {
    hold();
    return HashStore::add(key, value);
  }
  std::vector<std::vector<uint8_t>> multiGet(const std::vector<std::string>& keys) override {
    hold();
    return HashStore::multiGet(keys);
  }
};

struct Lost {
  std::mutex mu;
  std::string what;
  std::chrono::steady_clock::time_point at;
  std::function<void(const std::string&)> callback() {
    return [this](const std::string& w) {
      std::lock_guard<std::mutex> lock(mu);
      what = w, at = std::chrono::steady_clock::now();
    };
  }
  std::string get() {
    std::lock_guard<std::mutex> lock(mu);
    return what;
  }
};

// Beats and looks every 40 ms instead of every second, with a timeout of 0.4 s (a run's least is 1
// s): ten periods, as 30 s is thirty in a run, and the tests wait under a second where they waited
// several. The destructor waits 0.5 s for a last beat stuck in a silent store, not 3.
ember::HeartbeatOptions watching(int rank, std::chrono::milliseconds timeout = 400ms) {
  ember::HeartbeatOptions o;
  o.rank = rank, o.world = 2, o.watch_timeout = timeout, o.period = 40ms, o.last_beat_wait = 500ms;
  o.store_address = "10.0.0.1:29500";
  o.hosts = {"10.0.0.1 on host a", "10.0.0.2 on host b"};
  return o;
}

TEST(DistHeartbeat, APeerThatNeverBeatsIsNamedWithItsHostAfterTheTimeout) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  store->add(ember::heartbeat_key(1), 0);  // joined, then went silent
  Lost lost;
  const auto t0 = std::chrono::steady_clock::now();
  ember::Heartbeat beat(store, watching(0), lost.callback());
  while (lost.get().empty() && std::chrono::steady_clock::now() - t0 < 10s) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(lost.get(),
            "rank 0 lost rank 1 at 10.0.0.2 on host b: no heartbeat for 0.4 s (distributed.heartbeat_timeout_s 0.4)");
  const double after = std::chrono::duration<double>(lost.at - t0).count();
  EXPECT_GE(after, 0.4);
  EXPECT_LT(after, 1.5);  // the timeout, a period, and slack for a loaded machine
}

TEST(DistHeartbeat, APeerThatFinishedIsNotLostAndBeatingPeersAreNot) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  store->add(ember::heartbeat_key(0), 0);
  store->add(ember::heartbeat_key(1), 0);
  Lost lost;
  ember::Heartbeat zero(store, watching(0), lost.callback());
  {
    Lost never;
    ember::Heartbeat one(store, watching(1), never.callback());
    std::this_thread::sleep_for(800ms);  // both beat past twice the timeout
    EXPECT_EQ(never.get(), "");
  }
  EXPECT_GE(store->add(ember::heartbeat_key(1), 0), ember::Heartbeat::kFinished);
  std::this_thread::sleep_for(640ms);  // the timeout and six periods
  EXPECT_EQ(lost.get(), "");
}

TEST(DistHeartbeat, AStoreThatStopsAnsweringIsLostAndTheDestructorDoesNotWaitForIt) {
  auto store = c10::make_intrusive<CuttableStore>();
  store->add(ember::heartbeat_key(0), 0);
  store->add(ember::heartbeat_key(1), 0);
  Lost lost;
  auto one = std::make_unique<ember::Heartbeat>(store, watching(1), lost.callback());
  std::this_thread::sleep_for(200ms);
  store->HashStore::add(ember::heartbeat_key(0), 1);  // rank 0 beats once; then the link is cut
  store->cut = true;
  const auto cut = std::chrono::steady_clock::now();
  while (lost.get().empty() && std::chrono::steady_clock::now() - cut < 10s) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(lost.get().rfind("rank 1 lost the store at 10.0.0.1:29500 (rank 0 at 10.0.0.1 on host a): no answer for ", 0),
            0u)
      << lost.get();
  EXPECT_LT(std::chrono::duration<double>(lost.at - cut).count(), 1.5);  // the timeout, a period, slack
  const auto t0 = std::chrono::steady_clock::now();
  one.reset();  // its beat is stuck in the store: waits last_beat_wait (0.5 s) at most
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.5);
  store->cut = false;  // the stuck beat finishes and ends (it holds the store)
  std::this_thread::sleep_for(200ms);
}

}  // namespace
