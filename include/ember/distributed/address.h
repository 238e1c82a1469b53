// Which local address a rank advertises to its peers: the one its packets to the master leave from
// (the kernel's route, found with a UDP connect() + getsockname(), which sends nothing), not the
// hostname's, which Debian's /etc/hosts and many containers resolve to loopback.
#pragma once
#include <string>
#include <vector>

namespace ember {

struct LocalAddress {
  std::string address;    // numeric, e.g. "10.77.0.2"
  std::string interface;  // the interface holding it, e.g. "eth0" ("" when none was found)
  bool loopback() const;
};

struct Route {
  LocalAddress from;  // the local end
  std::string to;     // `host` resolved, numeric
};

// The local address the kernel routes `host`:`port` from. Throws Error naming the host when it does
// not resolve or no route reaches it.
Route route_to(const std::string& host, int port);

// The local address held by interface `name` (the first IPv4 one, else the first IPv6 one). Throws
// Error naming the interface and `source` (the variable or key that named it) when there is none.
LocalAddress address_of_interface(const std::string& name, const std::string& source);

// The interface holding the numeric address `address` on this machine ("" when none does).
std::string interface_holding(const std::string& address);

// "eth0,ib0" -> {"eth0", "ib0"} (GLOO_SOCKET_IFNAME may list several, as in PyTorch).
std::vector<std::string> split_interfaces(const std::string& list);

}  // namespace ember
