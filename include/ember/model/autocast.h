// bf16 autocast for a scope (CPU or CUDA); parameters stay fp32, matmuls run in bf16.
#pragma once
#include <ATen/ATen.h>

namespace ember {

// Whether autocast is on for the device (false for devices autocast does not know, e.g. meta),
// and the dtype it casts to.
bool autocast_enabled(at::Device device);
at::ScalarType autocast_dtype(at::Device device);

class AutocastScope {
 public:
  AutocastScope(at::Device device, bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  at::DeviceType type_;
  bool enabled_;
  bool was_enabled_ = false;
};

// Autocast off for a scope (e.g. LEV's basis and product, which must stay fp32).
class NoAutocastScope {
 public:
  explicit NoAutocastScope(at::Device device);
  ~NoAutocastScope();
  NoAutocastScope(const NoAutocastScope&) = delete;
  NoAutocastScope& operator=(const NoAutocastScope&) = delete;

 private:
  at::DeviceType type_;
  bool was_enabled_;
};

}  // namespace ember
