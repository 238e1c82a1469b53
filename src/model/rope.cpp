#include "ember/model/rope.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cmath>

#include "ember/util/error.h"
#include "ember/kernels/kernel_choice.h"
#include "kernels/rope_cpu_loops.h"
#include "kernels/rope_cuda.h"

namespace ember {
namespace {

// ember's CUDA kernel rotates inputs of any floating dtype in the tables' precision (fp32 below
// fp64) and returns the input's dtype; elsewhere the input is cast to the tables' dtype first.
bool fused_on_cuda(const at::Tensor& x) {
  return x.is_cuda() && x.dim() == 4 && kernels::use_fused(kernels::Op::rope, x.device()) &&
         rope::cuda_kernel_runs_on(x.device());
}

bool fused_on_cpu(const at::Tensor& x) {
  return x.is_cpu() && x.dim() == 4 && x.stride(3) == 1 && kernels::use_fused(kernels::Op::rope, x.device());
}

// The test-only fault of ember/kernels/kernel_choice.h, on a forward rotation's output.
at::Tensor with_fault(at::Tensor y, bool inverse) {
  if (!inverse) kernels::testing::apply_fault(kernels::Op::rope, y);
  return y;
}

// An output for a rotation of a [B, H, T, d_h] tensor laid out in memory as `layout` says: the heads
// of a projection are [B, T, H, d_h] there, and kept so, the gradient flows back into the
// projection without a transpose copy. Contiguous when the layout is not dense (a narrowed view).
at::Tensor empty_in_layout(const at::Tensor& x, at::IntArrayRef layout) {
  const auto probe = at::empty_strided(x.sizes(), layout, x.options().device(at::kMeta));
  if (layout.size() == 4 && layout[3] == 1 && probe.is_non_overlapping_and_dense())
    return at::empty_strided(x.sizes(), layout, x.options());
  return at::empty(x.sizes(), x.options());
}

// x [B, H, T, d_h] rotated at positions offset.. (by the negative angles when inverse), in the
// tables' dtype except on CUDA (fused_on_cuda), into the layout of `layout` where it applies. CPU:
// one fused pass over rows (kernels/rope_cpu_loops.h); CUDA: kernels/rope_cuda.cu; elsewhere (meta)
// ATen ops.
at::Tensor rotate(const at::Tensor& x, at::IntArrayRef layout, const at::Tensor& cos_all, const at::Tensor& sin_all,
                  int64_t offset, bool inverse) {
  const int64_t T = x.size(-2), half = x.size(-1) / 2;
  if (fused_on_cuda(x)) {
    auto y = empty_in_layout(x, layout);
    rope::rotate_cuda(x, y, cos_all, sin_all, offset, inverse);
    return with_fault(y, inverse);
  }
  if (fused_on_cpu(x)) {
    auto y = empty_in_layout(x, layout);
    const rope::Rows rows{x.size(0),   x.size(1),   T,           half,        offset,     x.stride(0),
                          x.stride(1), x.stride(2), y.stride(0), y.stride(1), y.stride(2)};
    const int64_t grain = std::max<int64_t>(1, 16384 / x.size(-1));
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "rope", [&] {
      at::parallel_for(0, x.numel() / x.size(-1), grain, [&](int64_t r0, int64_t r1) {
        rope::cpu::rotate_rows(x.const_data_ptr<scalar_t>(), y.mutable_data_ptr<scalar_t>(),
                               cos_all.const_data_ptr<scalar_t>(), sin_all.const_data_ptr<scalar_t>(), rows, inverse,
                               r0, r1);
      });
    });
    return with_fault(y, inverse);
  }
  auto cos = cos_all.narrow(0, offset, T), sin = sin_all.narrow(0, offset, T);
  if (inverse) sin = -sin;
  auto xa = x.narrow(-1, 0, half), xb = x.narrow(-1, half, half);
  return at::cat({xa * cos - xb * sin, xb * cos + xa * sin}, -1);
}

// The rotation is orthogonal: its gradient is the inverse rotation of the incoming gradient, so
// backward saves nothing but the tables (and x's layout, which its output and gradient keep).
struct RopeRotation : torch::autograd::Function<RopeRotation> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& cos_all,
                            const at::Tensor& sin_all, int64_t offset) {
    ctx->save_for_backward({cos_all, sin_all});
    ctx->saved_data["offset"] = offset;
    ctx->saved_data["dtype"] = static_cast<int64_t>(x.scalar_type());  // of the output, so of its gradient
    ctx->saved_data["layout"] = x.strides().vec();
    return rotate(x, x.strides(), cos_all, sin_all, offset, false);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    auto g = grads[0].to(static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt()));
    const auto layout = ctx->saved_data["layout"].toIntVector();
    return {rotate(g, layout, saved[0], saved[1], ctx->saved_data["offset"].toInt(), true), {}, {}, {}};
  }
};

// Llama 3.1's scaling of one frequency: wavelengths 2 pi / omega beyond L / low_freq_factor are
// slowed by `factor`, those under L / high_freq_factor kept, and between them
// omega' = (1 - s) omega / factor + s omega with s = (L / wavelength - low) / (high - low).
double llama3_scaled(double omega, const RopeScalingConfig& s) {
  const double L = static_cast<double>(s.original_max_seq_len);
  const double wavelength = 2.0 * M_PI / omega;
  if (wavelength > L / s.low_freq_factor) return omega / s.factor;
  if (wavelength < L / s.high_freq_factor) return omega;
  const double smooth = (L / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return (1.0 - smooth) * omega / s.factor + smooth * omega;
}

}  // namespace

at::Tensor rope_frequencies(int64_t head_dim, double base, const RopeScalingConfig& scaling) {
  auto omega = at::empty({head_dim / 2}, at::kDouble);
  auto* w = omega.mutable_data_ptr<double>();
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    w[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));  // base^(-2i/d_h)
    if (scaling.type == RopeScalingType::llama3) w[i] = llama3_scaled(w[i], scaling);
  }
  return omega;
}

Rope::Rope(int64_t head_dim, int64_t max_seq_len, double base, const RopeScalingConfig& scaling) {
  auto omega = rope_frequencies(head_dim, base, scaling);
  auto theta = at::outer(at::arange(max_seq_len, at::kDouble), omega);  // p * omega_i
  cos_ = theta.cos();
  sin_ = theta.sin();
}

const std::pair<at::Tensor, at::Tensor>& Rope::tables(const at::Device& device, at::ScalarType dtype) const {
  auto key = std::make_pair(device.str(), dtype);
  auto it = cache_.find(key);
  if (it == cache_.end())
    it = cache_.emplace(key, std::make_pair(cos_.to(device, dtype), sin_.to(device, dtype))).first;
  return it->second;
}

at::Tensor Rope::apply(const at::Tensor& x, int64_t offset) const {
  const int64_t T = x.size(-2);
  if (offset + T > cos_.size(0))
    throw Error("sequence of length " + std::to_string(offset + T) +
                " exceeds model.max_seq_len = " + std::to_string(cos_.size(0)));
  const auto dtype = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const auto& [cos_all, sin_all] = tables(x.device(), dtype);
  return RopeRotation::apply(fused_on_cuda(x) ? x : x.to(dtype), cos_all, sin_all, offset);
}

}  // namespace ember
