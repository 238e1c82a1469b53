// RoPE's rotation (kernels/rope.h): the autograd function, the choice between the fused passes and
// ATen's ops, the CPU pass over rows split across threads, and the CUDA pass: checks that make an
// out-of-bounds read an error, then one launch on the current stream of x's device.
#include "kernels/rope.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <algorithm>

#include "ember/kernels/kernel_choice.h"
#include "ember/util/error.h"
#include "kernels/rope_cpu_loops.h"

#ifdef EMBER_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <fmt/ranges.h>

#include "kernels/cuda_glue.h"
#include "kernels/rope_launch.h"
#endif

namespace ember::rope {

#ifdef EMBER_WITH_CUDA
namespace {
void require_tables(const at::Tensor& x, const at::Tensor& table, int64_t offset) {
  const auto want = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  if (table.device() != x.device() || table.scalar_type() != want || !table.is_contiguous() || table.dim() != 2 ||
      2 * table.size(1) != x.size(3) || offset < 0 || offset + x.size(2) > table.size(0))
    throw Error(fmt::format("RoPE (CUDA): tables {} {} on {} do not fit x {} on {} at offset {}",
                            c10::toString(table.scalar_type()), fmt::join(table.sizes(), "x"), table.device().str(),
                            fmt::join(x.sizes(), "x"), x.device().str(), offset));
}
}  // namespace

bool cuda_kernel_compiled() { return true; }

bool cuda_kernel_runs_on(const at::Device& device) {
  static cuda_glue::ProbeCache known{};
  return cuda_glue::kernel_runs_on(known, device, probe_rope_kernel, "RoPE", "rotating with ATen ops");
}

void rotate_cuda(const at::Tensor& x_in, at::Tensor& y, const at::Tensor& cos, const at::Tensor& sin, int64_t offset,
                 bool inverse) {
  if (!x_in.is_cuda() || x_in.dim() != 4 || x_in.size(3) % 2 != 0)
    throw Error(fmt::format("RoPE (CUDA): expected x [B, H, T, even d_h] on a CUDA device, got {} on {}",
                            fmt::join(x_in.sizes(), "x"), x_in.device().str()));
  if (y.sizes() != x_in.sizes() || y.scalar_type() != x_in.scalar_type() || y.device() != x_in.device() ||
      y.stride(3) != 1)
    throw Error(fmt::format("RoPE (CUDA): output {} {} on {} does not fit x {} {}", c10::toString(y.scalar_type()),
                            fmt::join(y.sizes(), "x"), y.device().str(), c10::toString(x_in.scalar_type()),
                            fmt::join(x_in.sizes(), "x")));
  const auto x = x_in.stride(3) == 1 ? x_in : x_in.contiguous();
  require_tables(x, cos, offset);
  require_tables(x, sin, offset);
  const c10::cuda::CUDAGuard guard(x.device());
  const Rows rows{x.size(0),   x.size(1),   x.size(2),   x.size(3) / 2, offset,     x.stride(0),
                  x.stride(1), x.stride(2), y.stride(0), y.stride(1),   y.stride(2)};
  cuda_glue::check_launch(
      "RoPE", launch_rope(x.const_data_ptr(), y.mutable_data_ptr(), cos.const_data_ptr(), sin.const_data_ptr(),
                          element_of(x.scalar_type(), "RoPE (CUDA)"), rows, inverse, cuda_glue::stream_of(x)));
}
#else
bool cuda_kernel_compiled() { return false; }

bool cuda_kernel_runs_on(const at::Device&) { return false; }

void rotate_cuda(const at::Tensor&, at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t, bool) {
  throw Error("RoPE: this build has no CUDA kernels (configure with a CUDA LibTorch and nvcc)");
}
#endif

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

int64_t saved_bytes_per_row() { return 0; }  // RopeRotation saves the tables, not x

at::Tensor rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, int64_t offset) {
  return RopeRotation::apply(x, cos, sin, offset);
}

}  // namespace ember::rope
