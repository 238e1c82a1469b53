#include "kernels/projections.h"

#include <algorithm>

#include <ATen/autocast_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/autograd.h>

#include "ember/kernels/kernel_choice.h"

namespace ember::projections {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor as(const at::Tensor& t, at::ScalarType dtype) { return t.scalar_type() == dtype ? t : t.to(dtype); }

// The dtype autocast would give x's matmul: its autocast dtype where autocast is on for x's device
// (CPU or CUDA) and x is eligible, else x's own.
at::ScalarType matmul_dtype(const at::Tensor& x) {
  const auto type = x.device().type();
  const bool known = type == at::kCPU || type == at::kCUDA;
  const bool amp = known && at::autocast::is_autocast_enabled(type) && at::autocast::is_autocast_eligible(x, type);
  return amp ? at::autocast::get_autocast_dtype(type) : x.scalar_type();
}

// y = x [W_1; ...; W_k]^T as one GEMM, in the stacked layout. The stacked weight is a transient
// copy in forward and again in backward, never kept between them: what backward keeps is x in the
// matmul dtype (one copy, where a linear per weight keeps k) and the weights in it (the casts a
// linear per weight would keep too). Backward takes y's gradient G = [g_1 ... g_k], one tensor of
// the same layout, and forms dL/dx = G [W_1; ...; W_k] and the stacked dL/dW = G^T x with one GEMM
// each.
struct StackedLinear : torch::autograd::Function<StackedLinear> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, at::TensorList weights) {
    const auto dtype = matmul_dtype(x);
    variable_list saved;
    const c10::impl::ExcludeDispatchKeyGuard off(c10::autocast_dispatch_keyset);  // the operands are cast here, once
    saved.push_back(as(x, dtype));
    // not autocast's cache: a cast made here has no graph to share
    for (const auto& w : weights) saved.push_back(as(w, dtype));
    auto y = at::linear(saved[0], at::cat(at::TensorList(saved).slice(1), 0));  // y = x [W_1; ...; W_k]^T
    ctx->save_for_backward(saved);
    ctx->saved_data["x_dtype"] = x.scalar_type();
    ctx->saved_data["w_dtype"] = weights.front().scalar_type();
    kernels::testing::apply_fault(kernels::Op::projections, y);
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& xc = saved[0];
    const auto weights = at::TensorList(saved).slice(1);
    const auto g = grads[0].reshape({-1, grads[0].size(-1)});  // G = [g_1 ... g_k], [rows, width]
    variable_list out(weights.size() + 1);
    if (ctx->needs_input_grad(0))
      out[0] = as(at::mm(g, at::cat(weights, 0)).view(xc.sizes()), ctx->saved_data["x_dtype"].toScalarType());
    bool any_weight = false;
    for (size_t i = 0; i < weights.size(); ++i) any_weight = any_weight || ctx->needs_input_grad(i + 1);
    if (any_weight) {
      std::vector<int64_t> rows;
      for (const auto& w : weights) rows.push_back(w.size(0));
      const auto dw = at::mm(g.t(), xc.reshape({-1, xc.size(-1)})).split_with_sizes(rows, 0);  // G^T x
      for (size_t i = 0; i < weights.size(); ++i)
        if (ctx->needs_input_grad(i + 1)) out[i + 1] = as(dw[i], ctx->saved_data["w_dtype"].toScalarType());
    }
    return out;
  }
};

// Decoding's few rows: the stacked copy would cost more than the GEMMs it joins. A function of the
// shape alone, so that a checkpointed block's recompute takes the path its forward took.
constexpr int64_t kMinStackedRows = 64;

}  // namespace

bool stacks(const at::Tensor& x) {
  const bool few_rows = x.numel() / std::max<int64_t>(x.size(-1), 1) < kMinStackedRows;
  return kernels::use_fused(kernels::Op::projections, x.device()) && !few_rows;
}

at::Tensor stacked(const at::Tensor& x, const std::vector<at::Tensor>& weights) {
  return StackedLinear::apply(x, at::TensorList(weights));  // a TensorList: each weight an input of the graph
}

std::vector<at::Tensor> of(const at::Tensor& x, const std::vector<at::Tensor>& weights) {
  if (weights.size() > 1 && stacks(x)) {
    std::vector<int64_t> widths;
    for (const auto& w : weights) widths.push_back(w.size(0));
    return stacked(x, weights).split_with_sizes(widths, -1);  // backward: one gathering copy
  }
  std::vector<at::Tensor> out;
  for (const auto& w : weights) out.push_back(at::linear(x, w));
  return out;
}

int64_t saved_bytes_per_row(int64_t width, int64_t x_elem, int64_t matmul_elem, int64_t count,
                            bool stacked) {
  if (x_elem == matmul_elem) return width * x_elem;
  return (stacked ? 1 : count) * width * matmul_elem;  // StackedLinear's as(x), or at::linear's autocast casts
}

bool stacked_in_estimate() { return kernels::path(kernels::Op::projections) == kernels::Path::fused; }

}  // namespace ember::projections
