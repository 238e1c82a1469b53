#include "ember/model/fused_projections.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include <ATen/autocast_mode.h>

#include "ember/model/autocast.h"

namespace ember {
namespace {

std::atomic<bool>& fused_switch() {  // EMBER_FUSED_PROJECTIONS=0 turns the stacking off (A/B runs)
  static std::atomic<bool> on{[] {
    const char* v = std::getenv("EMBER_FUSED_PROJECTIONS");
    return !(v && std::strcmp(v, "0") == 0);
  }()};
  return on;
}

}  // namespace

bool fused_projections() { return fused_switch().load(); }
bool set_fused_projections(bool on) { return fused_switch().exchange(on); }

std::vector<at::Tensor> projections(const at::Tensor& x, const std::vector<at::Tensor>& weights) {
  if (weights.size() == 1 || !fused_projections()) {
    std::vector<at::Tensor> out;
    for (const auto& w : weights) out.push_back(at::linear(x, w));
    return out;
  }
  std::vector<int64_t> rows;
  for (const auto& w : weights) rows.push_back(w.size(0));
  // Under autocast the stack is built from the weights as autocast casts them (its cache keeps one
  // cast per weight for the forward), so the copy is in the matmul dtype and the linear casts only x.
  std::vector<at::Tensor> stack = weights;
  if (autocast_enabled(x.device()))
    for (auto& w : stack) w = at::autocast::cached_cast(autocast_dtype(x.device()), w, x.device().type());
  return at::linear(x, at::cat(stack, 0)).split_with_sizes(rows, -1);  // y = x [W_1; ...; W_k]^T
}

}  // namespace ember
