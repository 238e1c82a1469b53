// Measured matmul peak (FLOP/s) of this device and dtype: the denominator of MFU.
#pragma once
#include <ATen/ATen.h>

namespace ember {

double measure_matmul_peak(at::Device device, at::ScalarType dtype, int64_t n = 1024);

}  // namespace ember
