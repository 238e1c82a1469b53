#include "ember/model/norm.h"

#include <torch/autograd.h>

#include "ember/model/init.h"
#include "ember/kernels/kernel_choice.h"
#include "kernels/rms_norm.h"

namespace ember {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The gradients of the fused pass (kernels/rms_norm.h) from those of h (along the stream; undefined
// without m or when h went unused) and of y, with what forward saved: h (x without m), g, 1/rms.
rms_norm::Backward fused_backward(AutogradContext* ctx, const at::Tensor& dh, at::Tensor dy) {
  const auto saved = ctx->get_saved_variables();
  if (!dy.defined()) dy = at::zeros_like(saved[0]);  // only h was used
  const auto m_type = static_cast<at::ScalarType>(ctx->saved_data["m_type"].toInt());
  return rms_norm::backward(dh, dy, saved[0], saved[1], saved[2], m_type);
}

// y = RMSNorm(x) g in one pass each way; saves x, g and the per-row 1/rms.
struct FusedRmsNorm : torch::autograd::Function<FusedRmsNorm> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& g, double eps) {
    ctx->set_materialize_grads(false);  // an unused output's gradient stays undefined, not zeros
    const auto x = x_in.contiguous();
    auto f = rms_norm::forward(x, {}, g, eps, x.scalar_type());
    kernels::testing::apply_fault(kernels::Op::norm, f.y);
    ctx->save_for_backward({x, g, f.r});
    ctx->saved_data["m_type"] = static_cast<int64_t>(x.scalar_type());
    return f.y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    auto b = fused_backward(ctx, {}, grads[0]);
    return {b.dx, b.dg, {}};
  }
};

// {h, y} = {x + m, RMSNorm(x + m) g} in one pass each way, y in y_type; saves h, g and the per-row
// 1/rms. Backward adds the stream's gradient of h into the norm's: dx, and dm (in m's type).
struct FusedAddRmsNorm : torch::autograd::Function<FusedAddRmsNorm> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& m, const at::Tensor& g,
                               double eps, int64_t y_type) {
    ctx->set_materialize_grads(false);  // h unused (the final norm's): no zero-filled dh read in backward
    auto f = rms_norm::forward(x, m, g, eps, static_cast<at::ScalarType>(y_type));
    kernels::testing::apply_fault(kernels::Op::norm, f.y);
    ctx->save_for_backward({f.h, g, f.r});
    ctx->saved_data["m_type"] = static_cast<int64_t>(m.scalar_type());
    return {f.h, f.y};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto b = fused_backward(ctx, grads[0], grads[1]);
    return {b.dx, b.dm.defined() ? b.dm : b.dx, b.dg, {}, {}};
  }
};

bool fused(const at::Tensor& x) { return kernels::use_fused(kernels::Op::norm, x.device()); }

at::Tensor aten_norm(const at::Tensor& x, const at::Tensor& g, double eps) {
  return at::rms_norm(x, {x.size(-1)}, g, eps);
}

}  // namespace

RMSNorm::RMSNorm(int64_t dim, double eps) : eps_(eps) { weight_ = register_parameter("weight", ones_parameter({dim})); }

at::Tensor RMSNorm::forward(const at::Tensor& x) {
  if (!fused(x) || !rms_norm::fused_supported(x, {}, weight_, x.scalar_type())) return aten_norm(x, weight_, eps_);
  return FusedRmsNorm::apply(x, weight_, eps_);
}

std::pair<at::Tensor, at::Tensor> RMSNorm::add_forward(const at::Tensor& x, const at::Tensor& m,
                                                       std::optional<at::ScalarType> y_type) {
  const auto out = y_type.value_or(x.scalar_type());
  if (!fused(x) || !rms_norm::fused_supported(x, m, weight_, out)) {
    auto h = x + m;
    auto y = aten_norm(h, weight_, eps_);
    return {h, y.scalar_type() == out ? y : y.to(out)};
  }
  auto hy = FusedAddRmsNorm::apply(x, m, weight_, eps_, static_cast<int64_t>(out));
  return {hy[0], hy[1]};
}

at::Tensor RMSNorm::reference(const at::Tensor& x) {
  auto xf = x.to(at::kDouble);
  auto y = xf * at::rsqrt(xf.pow(2).mean(-1, true) + eps_) * weight_.to(at::kDouble);
  return y.to(x.scalar_type());
}

}  // namespace ember
