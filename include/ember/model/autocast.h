// bf16 autocast for a scope (CPU or CUDA); parameters stay fp32, matmuls run in bf16.
#pragma once
#include <ATen/ATen.h>

#include <optional>

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

// How precisely a reader of a normed input (a mixer, an MLP) needs it: as the residual stream
// holds it (fp32), or only as its matmuls read it, when it reads the input through projections
// alone, which cast it to the autocast dtype anyway.
enum class InputPrecision { stream, matmul };

// The dtype the norm before such a reader writes its output in: the autocast dtype under autocast
// when the reader needs it only at matmul precision (the same values, minus a later cast and half
// the bytes), else none: the stream's. The one place that rule is written.
std::optional<at::ScalarType> normed_dtype(InputPrecision reader, at::Device device);

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
