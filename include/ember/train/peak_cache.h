// The matmul peak (MFU's denominator) measured once per device, precision, thread count and torch
// version, and kept in the user's cache folder (util/cache_dir.h, "peak"), one JSON file per key:
// measuring it in full took every training half a second. With a cached peak, training glances
// (two rounds of ~20 ms); a measurement that finds more than the cached value (the first ran on a
// busy machine; TrainProgress measures again when a model trains faster than its peak) raises it.
// `ember train --measure-peak` measures in full now.
#pragma once
#include <ATen/ATen.h>

#include <filesystem>
#include <string>

namespace ember {

struct MatmulPeak {
  double flops = 0.0;  // FLOP/s
  std::string source;  // "measured now", or the cache file it was read from
};

std::string matmul_peak_key(const at::Device& device, at::ScalarType dtype);
std::filesystem::path matmul_peak_file(const at::Device& device, at::ScalarType dtype);
// The cached peak, or a glance now when it finds more; measured in full now (and cached, if higher
// than what is there) when there is none, when the file does not read back, or with `measure_now`.
// A full measurement takes `full_budget_s` (the unit tests, which check what is cached, take less).
MatmulPeak matmul_peak(const at::Device& device, at::ScalarType dtype, bool measure_now = false,
                       double full_budget_s = 0.5);
// Caches `flops` for the key unless the cache already holds as much or more.
void raise_cached_peak(const at::Device& device, at::ScalarType dtype, double flops);

}  // namespace ember
