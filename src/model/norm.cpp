#include "ember/model/norm.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>

#include "ember/model/init.h"
#include "kernels/rms_norm_cpu_loops.h"

namespace ember {
namespace {

int64_t row_grain(int64_t D) { return std::max<int64_t>(1, 16384 / D); }

// One pass forward, one backward (kernels/rms_norm_cpu_loops.h); saves x and the per-row 1/rms.
struct FusedRmsNorm : torch::autograd::Function<FusedRmsNorm> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& g,
                            double eps) {
    const int64_t D = x.size(-1), rows = x.numel() / D;
    auto y = at::empty_like(x), r = at::empty({rows}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "rms_norm", [&] {
      at::parallel_for(0, rows, row_grain(D), [&](int64_t r0, int64_t r1) {
        rms_norm::cpu::forward_rows(x.const_data_ptr<scalar_t>(), g.const_data_ptr<scalar_t>(),
                                    y.mutable_data_ptr<scalar_t>(), r.mutable_data_ptr<scalar_t>(), D, eps, r0, r1);
      });
    });
    ctx->save_for_backward({x, g, r});
    return y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &g = saved[1], &r = saved[2];
    const auto dy = grads[0].contiguous();
    const int64_t D = x.size(-1), rows = x.numel() / D;
    auto dx = at::empty_like(x);
    auto partial = at::zeros({at::get_num_threads(), D}, x.options().dtype(at::kDouble));  // dg per thread
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "rms_norm_backward", [&] {
      at::parallel_for(0, rows, row_grain(D), [&](int64_t r0, int64_t r1) {
        rms_norm::cpu::backward_rows(dy.const_data_ptr<scalar_t>(), x.const_data_ptr<scalar_t>(),
                                     g.const_data_ptr<scalar_t>(), r.const_data_ptr<scalar_t>(),
                                     dx.mutable_data_ptr<scalar_t>(),
                                     partial.mutable_data_ptr<double>() + at::get_thread_num() * D, D, r0, r1);
      });
    });
    return {dx, partial.sum(0).to(g.scalar_type()), {}};
  }
};

}  // namespace

RMSNorm::RMSNorm(int64_t dim, double eps) : eps_(eps) { weight_ = register_parameter("weight", ones_parameter({dim})); }

// The fused CPU pass where it applies (contiguous, gain and input of one floating type); ATen's
// rms_norm elsewhere (GPUs, bf16 inputs, the meta device).
at::Tensor RMSNorm::forward(const at::Tensor& x) {
  const bool fused = x.is_cpu() && x.is_contiguous() && x.scalar_type() == weight_.scalar_type() &&
                     (x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble);
  if (fused) return FusedRmsNorm::apply(x, weight_, eps_);
  return at::rms_norm(x, {x.size(-1)}, weight_, eps_);
}

at::Tensor RMSNorm::reference(const at::Tensor& x) {
  auto xf = x.to(at::kDouble);
  auto y = xf * at::rsqrt(xf.pow(2).mean(-1, true) + eps_) * weight_.to(at::kDouble);
  return y.to(x.scalar_type());
}

}  // namespace ember
