#include "ember/model/init.h"

namespace ember {
namespace {
thread_local bool g_meta = false;
at::TensorOptions parameter_options() { return at::TensorOptions().device(g_meta ? at::kMeta : at::kCPU); }
}  // namespace

at::Tensor normal_parameter(at::IntArrayRef shape, double std) {
  auto t = at::empty(shape, parameter_options());
  return g_meta ? t : t.normal_(0.0, std);
}

at::Tensor ones_parameter(at::IntArrayRef shape) { return at::ones(shape, parameter_options()); }

at::Tensor full_parameter(at::IntArrayRef shape, double value) { return at::full(shape, value, parameter_options()); }

MetaInitScope::MetaInitScope() : previous_(g_meta) { g_meta = true; }
MetaInitScope::~MetaInitScope() { g_meta = previous_; }

}  // namespace ember
