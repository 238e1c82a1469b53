// The on-device check of ember's fused ops (ember/kernels/kernel_choice.h): each op runs forward and
// backward on small random inputs through its fused path and through ATen's, on the device and in
// the precision a run will use. Their outputs and gradients are compared element by element within
// the tolerance of the precision, and both paths are timed. `auto` takes the fused path only where
// it agrees and is not slower (model/kernel_table.h caches the result).
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "ember/kernels/kernel_choice.h"

namespace ember {

struct KernelCheckRow {
  kernels::Op op = kernels::Op::norm;
  bool agrees = false;
  double error = 0.0;  // the worst |fused - aten| over its tolerance, element by element: <= 1 agrees
  std::string worst;   // which output or gradient it was (or the error the fused path threw)
  double fused_ms = 0.0, aten_ms = 0.0;  // median of forward + backward
  kernels::Path choice = kernels::Path::aten;  // what auto takes: fused where it agrees and is not slower
};

// Timed rounds per op (each times both paths once, after a warm-up of each); their median is taken.
inline constexpr int kKernelCheckRounds = 5;

// The rows of every op, on `device`, with fp32 or bf16 autocast as a run in `bf16` would use them.
// The inputs come from a generator of their own: the global random state is left as it was.
// `rounds` (>= 1) is for callers that need the agreement, not steady timings (the unit tests of a
// faulty kernel); the kernel table always checks with kKernelCheckRounds.
std::vector<KernelCheckRow> check_kernels(const at::Device& device, bool bf16, int rounds = kKernelCheckRounds);

// Fused counts as not slower up to this ratio of ATen's time (timings of small inputs are noisy).
inline constexpr double kFusedTimeAllowance = 1.05;

// Whether fused output f equals ATen's a within the tolerance of `bf16` (else fp32, or fp64 for fp64
// tensors): |f - a| <= rtol |a| + floor max|a| per element; returns the worst ratio (inf when their
// shapes differ or f is not finite where a is).
double disagreement(const at::Tensor& f, const at::Tensor& a, bool bf16);

}  // namespace ember
