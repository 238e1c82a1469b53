// Private to src/distributed: which address a rank advertises to its peers, and why.
//
// The rule, first match wins: GLOO_SOCKET_IFNAME (Gloo) or NCCL_SOCKET_IFNAME (NCCL) from the
// environment; the distributed.interface key; else the local address that routes to the master.
// On the master's own node that route is loopback when MASTER_ADDR names this machine by a name
// that resolves to 127.x: in a job of several nodes those ranks take the master's address as the
// other nodes' ranks reach it (they publish it in the store), which must be an address of this
// machine. With NCCL, NCCL_SOCKET_IFNAME is set for the process (when unset) to the interface chosen.
#pragma once
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "ember/config/distributed_config.h"
#include "ember/distributed/address.h"
#include "ember/distributed/environment.h"

namespace ember {

struct Advertised {
  std::vector<LocalAddress> addresses;  // Gloo's devices (several when GLOO_SOCKET_IFNAME lists several)
  std::string rule;                     // why these, for the log: "the route to 10.0.0.1", "GLOO_SOCKET_IFNAME"
  std::string describe() const;         // "10.77.0.2 (veth1)"
};

Advertised choose_advertised(const DistEnv& env, Backend backend, const std::string& interface, c10d::Store& store,
                             std::chrono::seconds timeout);

}  // namespace ember
