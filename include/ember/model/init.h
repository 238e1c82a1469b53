// Parameter creation for every model component, in one place: N(0, std) matrices and unit gains.
// Inside a MetaInitScope parameters are created on the meta device (shapes only, no memory), so
// `ember inspect` can count a 1.3B model instantly.
#pragma once
#include <ATen/ATen.h>

namespace ember {

at::Tensor normal_parameter(at::IntArrayRef shape, double std);
at::Tensor ones_parameter(at::IntArrayRef shape);
at::Tensor full_parameter(at::IntArrayRef shape, double value);

class MetaInitScope {
 public:
  MetaInitScope();
  ~MetaInitScope();
  MetaInitScope(const MetaInitScope&) = delete;
  MetaInitScope& operator=(const MetaInitScope&) = delete;

 private:
  bool previous_;
};

}  // namespace ember
