// ATen glue of the fused softmax cross-entropy: checks, then the CPU loops over rows split across
// threads, or one launch of the CUDA kernel on the current stream.
#include "kernels/xent.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <vector>

#include "ember/util/error.h"
#include "kernels/xent_cpu_loops.h"

#ifdef EMBER_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda_glue.h"
#include "kernels/xent_launch.h"
#endif

namespace ember::xent {
namespace {

bool fused_dtype(const at::Tensor& z) {
  const auto t = z.scalar_type();
  return t == at::kFloat || t == at::kDouble || t == at::kBFloat16;
}

struct Rows {  // what every row shares
  int64_t V, ld;
  const int64_t* targets;
  int64_t ignore;
  double s, g;
  bool grad;
};

int64_t rows_of(at::Tensor& z, const Rows& a, at::Tensor& loss, int64_t r0, int64_t r1) {
  const auto s = static_cast<float>(a.s), g = static_cast<float>(a.g);
  switch (z.scalar_type()) {
    case at::kDouble:
      return cpu::rows(z.mutable_data_ptr<double>(), a.V, a.ld, a.targets, a.ignore, a.s, a.g, a.grad,
                       loss.mutable_data_ptr<double>(), r0, r1);
    case at::kBFloat16:
      return cpu::rows(reinterpret_cast<Bf16*>(z.mutable_data_ptr<at::BFloat16>()), a.V, a.ld, a.targets, a.ignore, s,
                       g, a.grad, loss.mutable_data_ptr<float>(), r0, r1);
    default:
      return cpu::rows(z.mutable_data_ptr<float>(), a.V, a.ld, a.targets, a.ignore, s, g, a.grad,
                       loss.mutable_data_ptr<float>(), r0, r1);
  }
}

at::Tensor cpu_rows(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                    const at::Tensor& counted) {
  const int64_t n = z.size(0), V = z.size(1), ld = z.stride(0);
  const auto yc = y.contiguous();
  auto loss = at::empty({n}, z.options().dtype(z.scalar_type() == at::kDouble ? at::kDouble : at::kFloat));
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(V, 1));
  const int64_t* targets = yc.const_data_ptr<int64_t>();
  if (counted.defined()) g = mean_factor(g, counted.item<int64_t>());  // a CPU scalar: no sync
  const Rows rows{V, ld, targets, ignore_index, s, g, grad};
  std::atomic<int64_t> bad{n};  // the first row with a target outside [0, V) other than ignore_index
  at::parallel_for(0, n, grain, [&](int64_t r0, int64_t r1) {
    const int64_t first = rows_of(z, rows, loss, r0, r1);
    for (int64_t seen = bad.load(); first >= 0 && first < seen && !bad.compare_exchange_weak(seen, first);) {
    }
  });
  if (const int64_t r = bad.load(); r < n)
    throw Error(fmt::format("cross-entropy: target {} of row {} is outside the vocabulary [0, {})", targets[r], r, V));
  return loss;
}

#ifdef EMBER_WITH_CUDA
bool kernel_runs_on(const at::Device& device) {
  static cuda_glue::ProbeCache known{};
  return cuda_glue::kernel_runs_on(known, device, probe_xent_kernel, "cross-entropy", "using ATen ops");
}

at::Tensor cuda_rows(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                     const at::Tensor& counted) {
  const c10::cuda::CUDAGuard guard(z.device());
  const auto yc = y.contiguous();
  auto loss = at::empty({z.size(0)}, z.options().dtype(z.scalar_type() == at::kDouble ? at::kDouble : at::kFloat));
  cuda_glue::check_launch("cross-entropy", launch_xent(z.mutable_data_ptr(), element_of(z.scalar_type(), "cross-entropy"), z.size(0), z.size(1),
                                                       z.stride(0), yc.const_data_ptr<int64_t>(), ignore_index, s, g,
                                                       counted.defined() ? counted.const_data_ptr<int64_t>() : nullptr,
                                                       grad, loss.mutable_data_ptr(), cuda_glue::stream_of(z)));
  return loss;
}
#endif

}  // namespace

static at::Tensor checked_rows(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                               const at::Tensor& counted);

bool fused_supported(const at::Tensor& z) {
  if (z.dim() != 2 || !fused_dtype(z) || z.stride(1) != 1) return false;
  if (z.is_cpu()) return true;
#ifdef EMBER_WITH_CUDA
  return z.is_cuda() && kernel_runs_on(z.device());
#else
  return false;
#endif
}

at::Tensor softmax_xent_rows_(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                              const at::Tensor& counted) {
  // An op to the observers of ATen's ops: named in a profile (ember train --profile), and the
  // non-finite trace (model/nonfinite_trace.h) sees its inputs and outputs like any other op's.
  // The logits are overwritten: an observer that keeps inputs (the trace) is handed a copy of them.
  at::RecordFunction record(at::RecordScope::FUNCTION);
  std::vector<c10::IValue> inputs;
  if (record.isActive()) inputs = {record.needsInputs() ? z.clone() : z, y};
  record.before("ember::softmax_xent_rows_", &inputs);
  auto loss = checked_rows(z, y, s, g, grad, ignore_index, counted);
  if (record.isActive() && record.needsOutputs()) record.setOutputs(std::vector<c10::IValue>{loss, z});
  return loss;
}

static at::Tensor checked_rows(at::Tensor& z, const at::Tensor& y, double s, double g, bool grad, int64_t ignore_index,
                               const at::Tensor& counted) {
  if (!fused_supported(z))
    throw Error(fmt::format("cross-entropy: fused rows need [n, V] fp32, fp64 or bf16 logits with unit stride on a "
                            "CPU or a GPU the kernel runs on, got {} {} on {}",
                            c10::toString(z.scalar_type()), fmt::join(z.sizes(), "x"), z.device().str()));
  if (y.dim() != 1 || y.size(0) != z.size(0) || y.scalar_type() != at::kLong || y.device() != z.device())
    throw Error(fmt::format("cross-entropy: targets must be [{}] int64 on {}, got {} {} on {}", z.size(0),
                            z.device().str(), c10::toString(y.scalar_type()), fmt::join(y.sizes(), "x"),
                            y.device().str()));
  if (counted.defined() &&
      (counted.numel() != 1 || counted.scalar_type() != at::kLong || counted.device() != z.device()))
    throw Error(fmt::format("cross-entropy: the count of rows must be one int64 on {}, got {} {} on {}",
                            z.device().str(), c10::toString(counted.scalar_type()), fmt::join(counted.sizes(), "x"),
                            counted.device().str()));
#ifdef EMBER_WITH_CUDA
  if (z.is_cuda()) return cuda_rows(z, y, s, g, grad, ignore_index, counted);
#endif
  return cpu_rows(z, y, s, g, grad, ignore_index, counted);
}

void scale_unless_one_(at::Tensor& x, const at::Tensor& g) {
  if (g.numel() != 1)
    throw Error(fmt::format("scale_unless_one_: g must be a scalar, got {}", fmt::join(g.sizes(), "x")));
  if (g.is_cpu()) {
    // A CPU scalar, read in place: no ATen op, so a step's count of host syncs stays 0.
    const double v = g.scalar_type() == at::kDouble  ? *g.const_data_ptr<double>()
                     : g.scalar_type() == at::kFloat ? *g.const_data_ptr<float>()
                                                     : g.item<double>();
    if (v != 1.0) x.mul_(g.to(x.scalar_type()));
    return;
  }
#ifdef EMBER_WITH_CUDA
  if (x.is_cuda() && x.is_contiguous() && fused_dtype(x) && g.device() == x.device()) {
    const c10::cuda::CUDAGuard guard(x.device());
    const auto gx = g.to(x.scalar_type()).contiguous();  // freed after the launch: reused only in stream order
    cuda_glue::check_launch("scale_unless_one_", launch_scale_unless_one(x.mutable_data_ptr(), element_of(x.scalar_type(), "scale_unless_one_"), x.numel(),
                                                                         gx.const_data_ptr(), cuda_glue::stream_of(x)));
    return;
  }
#endif
  x.mul_(g.to(x.scalar_type()));
}

}  // namespace ember::xent
