#include "advertise.h"

#include <fmt/format.h>

#include <cstdlib>
#include <thread>

#include "ember/util/error.h"

namespace ember {
namespace {

constexpr const char* kMasterSeenAs = "ember/route/master_seen_as";  // the master's address, from a rank off its node
constexpr const char* kRoutesReported = "ember/route/reported";      // ranks that have looked up their route

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The route to the master is loopback on this node while the job spans nodes: once every rank has
// looked up its route, the master's address as the other nodes see it (this machine must hold
// it), else loopback (every "node" is this machine, as in a test on one host).
LocalAddress address_peers_reach(const DistEnv& env, const LocalAddress& loopback, c10d::Store& store,
                                 std::chrono::seconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (store.add(kRoutesReported, 0) < env.world) {
    if (std::chrono::steady_clock::now() > until)
      throw Error(fmt::format("distributed: rank {}: {} of {} ranks joined the job at {}:{} within {} s "
                              "(distributed.timeout_s)",
                              env.rank, store.add(kRoutesReported, 0), env.world, env.master_addr, env.master_port,
                              timeout.count()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!store.check({kMasterSeenAs})) return loopback;
  const auto bytes = store.get(kMasterSeenAs);
  const std::string seen(bytes.begin(), bytes.end());
  LocalAddress here{seen, interface_holding(seen)};
  if (here.interface.empty())
    throw Error(fmt::format("distributed: rank {}: the master '{}' is loopback on this node, and ranks of other nodes "
                            "reach it at {}, which this machine does not hold; name the interface to use with "
                            "distributed.interface (or GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME)",
                            env.rank, env.master_addr, seen));
  return here;
}

}  // namespace

std::string Advertised::describe() const {
  std::string s;
  for (const auto& a : addresses)
    s += (s.empty() ? "" : ", ") + a.address + (a.interface.empty() ? "" : " (" + a.interface + ")");
  return s.empty() ? "NCCL's choice" : s;
}

Advertised choose_advertised(const DistEnv& env, Backend backend, const std::string& interface, c10d::Store& store,
                             std::chrono::seconds timeout) {
  Advertised adv;
  const bool nccl = backend == Backend::nccl;
  const char* var = nccl ? "NCCL_SOCKET_IFNAME" : "GLOO_SOCKET_IFNAME";
  const std::string listed = env_or_empty(var);
  const bool routed = listed.empty() && interface.empty();
  if (!routed) store.add(kRoutesReported, 1);  // a rank on the master's node may wait for every rank's report
  if (nccl && !listed.empty()) {              // NCCL reads it itself (prefixes, =exact, ^exclusions)
    adv.rule = "NCCL_SOCKET_IFNAME=" + listed;
    return adv;
  }
  if (!listed.empty()) {
    for (const auto& name : split_interfaces(listed)) adv.addresses.push_back(address_of_interface(name, var));
    adv.rule = var;
  } else if (!interface.empty()) {
    adv.addresses.push_back(address_of_interface(interface, "distributed.interface"));
    adv.rule = "distributed.interface";
  } else {
    const Route route = route_to(env.master_addr, env.master_port);
    adv.rule = "the route to the master " + env.master_addr + (route.to == env.master_addr ? "" : " = " + route.to);
    if (!route.from.loopback()) store.set(kMasterSeenAs, std::vector<uint8_t>(route.to.begin(), route.to.end()));
    store.add(kRoutesReported, 1);
    adv.addresses.push_back(route.from);
    if (route.from.loopback() && env.local_world < env.world) {
      adv.addresses[0] = address_peers_reach(env, route.from, store, timeout);
      if (!adv.addresses[0].loopback()) adv.rule += ", as the other nodes reach it";
    }
  }
  // NCCL's bootstrap and socket transport take the same interface ("=": that name exactly).
  if (nccl && !adv.addresses.empty() && !adv.addresses[0].interface.empty())
    ::setenv("NCCL_SOCKET_IFNAME", ("=" + adv.addresses[0].interface).c_str(), 1);
  return adv;
}

}  // namespace ember
