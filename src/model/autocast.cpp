#include "ember/model/autocast.h"

#include <ATen/autocast_mode.h>

namespace ember {
namespace {
bool autocast_knows(at::DeviceType t) { return t == at::kCPU || t == at::kCUDA; }
}  // namespace

bool autocast_enabled(at::Device device) {
  return autocast_knows(device.type()) && at::autocast::is_autocast_enabled(device.type());
}

at::ScalarType autocast_dtype(at::Device device) { return at::autocast::get_autocast_dtype(device.type()); }

std::optional<at::ScalarType> normed_dtype(InputPrecision reader, at::Device device) {
  if (reader == InputPrecision::matmul && autocast_enabled(device)) return autocast_dtype(device);
  return std::nullopt;
}

AutocastScope::AutocastScope(at::Device device, bool enabled) : type_(device.type()), enabled_(enabled) {
  if (!enabled_) return;
  was_enabled_ = at::autocast::is_autocast_enabled(type_);
  at::autocast::set_autocast_dtype(type_, at::kBFloat16);
  at::autocast::set_autocast_enabled(type_, true);
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  at::autocast::set_autocast_enabled(type_, was_enabled_);
  if (!was_enabled_) at::autocast::clear_cache();
}

NoAutocastScope::NoAutocastScope(at::Device device) : type_(device.type()), was_enabled_(autocast_enabled(device)) {
  if (was_enabled_) at::autocast::set_autocast_enabled(type_, false);
}

NoAutocastScope::~NoAutocastScope() {
  if (was_enabled_) at::autocast::set_autocast_enabled(type_, true);
}

}  // namespace ember
