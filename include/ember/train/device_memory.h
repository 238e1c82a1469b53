// Peak memory of an accelerator's caching allocator (c10's device-generic DeviceAllocator, so no
// CUDA headers are needed): what `ember train` reports per log line on a GPU.
#pragma once
#include <ATen/ATen.h>

#include <optional>

namespace ember {

struct DevicePeakMemory {
  int64_t allocated_bytes = 0;  // the most the tensors held at once
  int64_t reserved_bytes = 0;   // the most the caching allocator held from the driver
};

// nullopt on the CPU (and on devices without a caching allocator).
std::optional<DevicePeakMemory> device_peak_memory(at::Device device);
void reset_device_peak_memory(at::Device device);

}  // namespace ember
