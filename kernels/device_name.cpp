#include "kernels/device_name.h"

#include <fmt/format.h>

#include <fstream>

#ifdef EMBER_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ember::kernels {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      auto name = line.substr(line.find(':') + 1);
      return name.erase(0, name.find_first_not_of(' '));
    }
  return "unknown model";
}

}  // namespace

std::string device_name(const c10::Device& device) {
  if (device.is_cpu()) return "cpu (" + cpu_model() + ")";
#ifdef EMBER_WITH_CUDA
  if (device.is_cuda()) {
    int index = device.has_index() ? device.index() : 0;
    if (!device.has_index()) cudaGetDevice(&index);
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, index) == cudaSuccess) return fmt::format("{} (sm_{}{})", p.name, p.major, p.minor);
  }
#endif
  return device.str();
}

}  // namespace ember::kernels
