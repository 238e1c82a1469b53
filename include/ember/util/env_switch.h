// The on/off switches of ember's optimisations for A/B runs (EMBER_FUSED_LOSS, EMBER_FUSED_SWIGLU,
// EMBER_FUSED_NORM): on unless the environment variable is "0".
#pragma once
#include <cstdlib>
#include <cstring>

namespace ember {

inline bool on_unless_env_zero(const char* name) {
  const char* v = std::getenv(name);
  return !(v && std::strcmp(v, "0") == 0);
}

}  // namespace ember
