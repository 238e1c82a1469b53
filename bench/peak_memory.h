// The process's resident memory for the benchmarks: VmRSS / VmHWM (peak) in kB from
// /proc/self/status, and a reset of the peak to the current size (clear_refs 5).
#pragma once
#include <fstream>
#include <string>

namespace ember::bench {

inline long status_kb(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
  return -1;
}

inline void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace ember::bench
