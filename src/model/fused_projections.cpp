#include "ember/model/fused_projections.h"

#include <algorithm>

#include <ATen/autocast_mode.h>
#include <torch/autograd.h>

#include "ember/model/autocast.h"
#include "ember/kernels/kernel_choice.h"

namespace ember {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor as(const at::Tensor& t, at::ScalarType dtype) { return t.scalar_type() == dtype ? t : t.to(dtype); }

// The blocks' gradients G = [g_1 ... g_k] as [rows, width]: when the consumers wrote them as the
// adjacent column blocks of one buffer (kernels/swiglu.h does), that buffer as it is; else a copy
// gathering them (an unused block's gradient is zero).
at::Tensor gathered_gradients(const variable_list& grads, at::TensorList weights, const at::Tensor& xc) {
  int64_t width = 0;
  for (const auto& w : weights) width += w.size(0);
  const int64_t rows = xc.numel() / xc.size(-1);
  bool one_buffer = true;
  for (size_t i = 0, column = 0; one_buffer && i < grads.size(); column += weights[i].size(0), ++i) {
    const auto& g = grads[i];
    one_buffer = g.defined() && g.scalar_type() == xc.scalar_type() && g.is_alias_of(grads[0]) && g.dim() >= 2 &&
                 g.stride(-1) == 1 && g.stride(-2) == width &&
                 g.storage_offset() == grads[0].storage_offset() + static_cast<int64_t>(column);
    for (int64_t d = 0; one_buffer && d + 2 < g.dim(); ++d) one_buffer = g.stride(d) == g.size(d + 1) * g.stride(d + 1);
  }
  if (one_buffer) return grads[0].as_strided({rows, width}, {width, 1});
  std::vector<at::Tensor> blocks;
  for (size_t i = 0; i < grads.size(); ++i)
    blocks.push_back(grads[i].defined() ? as(grads[i], xc.scalar_type())
                                        : at::zeros({rows, weights[i].size(0)}, xc.options()));
  return at::cat(blocks, -1).reshape({-1, width});
}

// y = x [W_1; ...; W_k]^T as one GEMM, handed out as the k column blocks. The stacked weight is a
// transient copy in forward and again in backward, never kept between them: what backward keeps is
// x in the matmul dtype (one copy, where a linear per weight keeps k) and the weights in it (the
// casts a linear per weight would keep too). Backward gathers the blocks' gradients G = [g_1 ... g_k]
// and forms dL/dx = G [W_1; ...; W_k] and the stacked dL/dW = G^T x with one GEMM each.
struct StackedLinear : torch::autograd::Function<StackedLinear> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, at::TensorList weights) {
    const bool amp = autocast_enabled(x.device()) && at::autocast::is_autocast_eligible(x, x.device().type());
    const auto dtype = amp ? autocast_dtype(x.device()) : x.scalar_type();
    variable_list saved;
    std::vector<int64_t> rows;
    const NoAutocastScope off(x.device());  // the operands are cast here, once
    saved.push_back(as(x, dtype));
    for (const auto& w : weights) {
      saved.push_back(as(w, dtype));  // not autocast's cache: a cast made here has no graph to share
      rows.push_back(w.size(0));
    }
    auto y = at::linear(saved[0], at::cat(at::TensorList(saved).slice(1), 0));  // y = x [W_1; ...; W_k]^T
    ctx->save_for_backward(saved);
    ctx->saved_data["x_dtype"] = x.scalar_type();
    ctx->saved_data["w_dtype"] = weights.front().scalar_type();
    kernels::testing::apply_fault(kernels::Op::projections, y);
    auto parts = y.split_with_sizes(rows, -1);
    return variable_list(parts.begin(), parts.end());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& xc = saved[0];
    const auto weights = at::TensorList(saved).slice(1);
    const auto g = gathered_gradients(grads, weights, xc);  // G = [g_1 ... g_k]
    variable_list out(grads.size() + 1);
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

std::vector<at::Tensor> projections(const at::Tensor& x, const std::vector<at::Tensor>& weights) {
  const bool few_rows = x.numel() / std::max<int64_t>(x.size(-1), 1) < kMinStackedRows;
  if (weights.size() == 1 || !kernels::use_fused(kernels::Op::projections, x.device()) || few_rows) {
    std::vector<at::Tensor> out;
    for (const auto& w : weights) out.push_back(at::linear(x, w));
    return out;
  }
  return StackedLinear::apply(x, at::TensorList(weights));  // a TensorList: each weight an input of the graph
}

}  // namespace ember
