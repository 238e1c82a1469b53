// A device's name as the kernel check keys its cache with: the CPU's model from /proc/cpuinfo, or
// the GPU's name and compute capability.
#pragma once
#include <c10/core/Device.h>

#include <string>

namespace ember::kernels {

std::string device_name(const c10::Device& device);

}  // namespace ember::kernels
