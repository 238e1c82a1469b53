#include "kernels/rope.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>

#include "ember/kernels/kernel_choice.h"
#include "kernels/rope_cpu_loops.h"
#include "kernels/rope_cuda.h"

namespace ember::rope {
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
at::Tensor rotate_into(const at::Tensor& x, at::IntArrayRef layout, const at::Tensor& cos_all, const at::Tensor& sin_all,
                  int64_t offset, bool inverse) {
  const int64_t T = x.size(-2), half = x.size(-1) / 2;
  if (fused_on_cuda(x)) {
    auto y = empty_in_layout(x, layout);
    rotate_cuda(x, y, cos_all, sin_all, offset, inverse);
    return with_fault(y, inverse);
  }
  if (fused_on_cpu(x)) {
    auto y = empty_in_layout(x, layout);
    const Rows rows{x.size(0),   x.size(1),   T,           half,        offset,     x.stride(0),
                          x.stride(1), x.stride(2), y.stride(0), y.stride(1), y.stride(2)};
    const int64_t grain = std::max<int64_t>(1, 16384 / x.size(-1));
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "rope", [&] {
      at::parallel_for(0, x.numel() / x.size(-1), grain, [&](int64_t r0, int64_t r1) {
        cpu::rotate_rows(x.const_data_ptr<scalar_t>(), y.mutable_data_ptr<scalar_t>(),
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
    return rotate_into(x, x.strides(), cos_all, sin_all, offset, false);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    auto g = grads[0].to(static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt()));
    const auto layout = ctx->saved_data["layout"].toIntVector();
    return {rotate_into(g, layout, saved[0], saved[1], ctx->saved_data["offset"].toInt(), true), {}, {}, {}};
  }
};

}  // namespace

bool rotates_in_input_dtype(const at::Tensor& x) { return fused_on_cuda(x); }

at::Tensor rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, int64_t offset) {
  return RopeRotation::apply(x, cos, sin, offset);
}

}  // namespace ember::rope
