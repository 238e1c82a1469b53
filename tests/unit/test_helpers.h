// Small helpers several unit-test files share (one definition, so that the files can also be
// compiled together in a unity group).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>

#include "ember/util/error.h"
#include "ember/kernels/kernel_choice.h"

namespace ember::testing {

inline const auto kF64 = torch::TensorOptions().dtype(torch::kDouble);

inline double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

inline int64_t parameter_count(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// An op held on ember's fused kernel (on) or ATen's ops (off) for one scope.
struct ScopedFusion : ember::kernels::ScopedPath {
  ScopedFusion(ember::kernels::Op op, bool on)
      : ScopedPath(op, on ? ember::kernels::Path::fused : ember::kernels::Path::aten) {}
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
