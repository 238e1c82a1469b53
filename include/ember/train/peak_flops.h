// Measured matmul peak (FLOP/s) of this device and dtype: the denominator of MFU.
#pragma once
#include <ATen/ATen.h>

namespace ember {

// Square products of a size that grows from 256 until one takes a few milliseconds (at most 1024
// on a CPU; 8192 on a GPU, where smaller ones time the launch), then the best of rounds of about
// 20 ms within about `budget_s` (at least two). A CPU without bf16 units multiplies at ~1 GFLOP/s
// in bf16, where fixed 1024^3 rounds took a minute per probe.
double measure_matmul_peak(at::Device device, at::ScalarType dtype, double budget_s = 0.5);

}  // namespace ember
