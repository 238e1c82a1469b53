// `ember train --profile FIRST:LAST`: records those steps with the PyTorch profiler (Kineto, CPU
// ops and, on a GPU, kernels), writes a Chrome / Perfetto trace and a summary by category
// (train/profile_summary.h) into <run>/profile/, and prints the table.
#pragma once
#include <ATen/Device.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace ember {

struct ProfileSteps {
  int64_t first = 0, last = -1;  // 1-based step numbers, both recorded; none by default
  bool enabled() const { return first > 0 && last >= first; }
  int64_t count() const { return enabled() ? last - first + 1 : 0; }
};

// "20:23" (steps 20 to 23) or "20" (step 20 alone); a UsageError naming `what` otherwise.
ProfileSteps parse_profile_steps(const std::string& text, const std::string& what = "--profile");

class StepProfiler {
 public:
  StepProfiler(ProfileSteps steps, std::filesystem::path out_dir, at::Device device);
  ~StepProfiler();  // stops a recording still running (a run that ended inside the window)
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;

  void before_step(int64_t step);  // the step about to run
  void after_step(int64_t step);   // the step just run; the window's last writes the results
  bool finished() const { return finished_; }

 private:
  void finish();
  ProfileSteps steps_;
  std::filesystem::path out_dir_;
  at::Device device_;
  bool active_ = false, finished_ = false;
};

}  // namespace ember
