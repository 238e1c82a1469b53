// ATen glue of the CUDA RoPE kernel: checks that make an out-of-bounds read an error, then one
// launch on the current stream of x's device.
#include "kernels/rope_cuda.h"

#include "ember/util/error.h"

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

}  // namespace ember::rope
