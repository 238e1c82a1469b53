#include "ember/distributed/address.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "ember/util/error.h"

namespace ember {
namespace {

std::string numeric_host(const sockaddr* a) {
  char host[NI_MAXHOST];
  const socklen_t len = a->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::getnameinfo(a, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return "";
  std::string s = host;
  return s.substr(0, s.find('%'));  // a link-local IPv6 address's "%eth0"
}

struct IfAddrs {
  ifaddrs* list = nullptr;
  IfAddrs() {
    if (::getifaddrs(&list) != 0) throw Error(std::string("distributed: getifaddrs: ") + std::strerror(errno));
  }
  ~IfAddrs() { ::freeifaddrs(list); }
};

}  // namespace

bool LocalAddress::loopback() const {
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return address == "::1";
}

Route route_to(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    throw Error(fmt::format("distributed: cannot resolve the master address '{}': {}", host, ::gai_strerror(rc)));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(found, ::freeaddrinfo);
  std::string why = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int s = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    // A UDP connect() only picks the route and the source address: no packet leaves.
    const bool ok = ::connect(s, a->ai_addr, a->ai_addrlen) == 0 &&
                    ::getsockname(s, reinterpret_cast<sockaddr*>(&local), &len) == 0;
    if (!ok) why = std::strerror(errno);
    ::close(s);
    if (!ok) continue;
    Route r;
    r.from.address = numeric_host(reinterpret_cast<sockaddr*>(&local));
    r.from.interface = interface_holding(r.from.address);
    r.to = numeric_host(a->ai_addr);
    if (!r.from.address.empty()) return r;
  }
  throw Error(fmt::format("distributed: no route from this machine to the master address '{}': {}", host, why));
}

std::string interface_holding(const std::string& address) {
  IfAddrs ifs;
  for (ifaddrs* i = ifs.list; i; i = i->ifa_next)
    if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6) &&
        numeric_host(i->ifa_addr) == address)
      return i->ifa_name;
  return "";
}

LocalAddress address_of_interface(const std::string& name, const std::string& source) {
  IfAddrs ifs;
  LocalAddress v6;
  bool exists = false;
  for (ifaddrs* i = ifs.list; i; i = i->ifa_next) {
    if (name != i->ifa_name) continue;
    exists = true;
    if (!i->ifa_addr) continue;
    if (i->ifa_addr->sa_family == AF_INET) return {numeric_host(i->ifa_addr), name};
    if (i->ifa_addr->sa_family == AF_INET6 && v6.address.empty()) v6 = {numeric_host(i->ifa_addr), name};
  }
  if (!v6.address.empty()) return v6;
  throw Error(fmt::format("distributed: {} names the interface '{}', which {} on this machine", source, name,
                          exists ? "has no IP address" : "does not exist"));
}

std::vector<std::string> split_interfaces(const std::string& list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

}  // namespace ember
