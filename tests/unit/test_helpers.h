// Small helpers several unit-test files share (one definition, so that the files can also be
// compiled together in a unity group).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>

#include "ember/util/error.h"

namespace ember::testing {

inline const auto kF64 = torch::TensorOptions().dtype(torch::kDouble);

inline double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

inline int64_t parameter_count(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// A switch (a fusion's setter, which returns the previous setting) held at `on` for one scope.
struct ScopedSwitch {
  bool (*set)(bool);
  bool was;
  ScopedSwitch(bool (*setter)(bool), bool on) : set(setter), was(setter(on)) {}
  ~ScopedSwitch() { set(was); }
  ScopedSwitch(const ScopedSwitch&) = delete;
  ScopedSwitch& operator=(const ScopedSwitch&) = delete;
};

// What f throws as an ember::Error, or "(no error)".
inline std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace ember::testing
