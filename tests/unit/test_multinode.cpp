// Multi-node plumbing (dist/): the address a rank advertises (the route to the master, an
// interface by name).
// Two hosts for real: tests/integration/multinode.sh.
#include <gtest/gtest.h>

#include <functional>

#include "ember/distributed/address.h"
#include "ember/util/error.h"

namespace {

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

}  // namespace
