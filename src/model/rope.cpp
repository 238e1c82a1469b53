#include "ember/model/rope.h"

#include <cmath>

#include "ember/util/error.h"
#include "kernels/rope.h"

namespace ember {
namespace {

// Llama 3.1's scaling of one frequency: wavelengths 2 pi / omega beyond L / low_freq_factor are
// slowed by `factor`, those under L / high_freq_factor kept, and between them
// omega' = (1 - s) omega / factor + s omega with s = (L / wavelength - low) / (high - low).
double llama3_scaled(double omega, const RopeScalingConfig& s) {
  const double L = static_cast<double>(s.original_max_seq_len);
  const double wavelength = 2.0 * M_PI / omega;
  if (wavelength > L / s.low_freq_factor) return omega / s.factor;
  if (wavelength < L / s.high_freq_factor) return omega;
  const double smooth = (L / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return (1.0 - smooth) * omega / s.factor + smooth * omega;
}

}  // namespace

at::Tensor rope_frequencies(int64_t head_dim, double base, const RopeScalingConfig& scaling) {
  auto omega = at::empty({head_dim / 2}, at::kDouble);
  auto* w = omega.mutable_data_ptr<double>();
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    w[i] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));  // base^(-2i/d_h)
    if (scaling.type == RopeScalingType::llama3) w[i] = llama3_scaled(w[i], scaling);
  }
  return omega;
}

Rope::Rope(int64_t head_dim, int64_t max_seq_len, double base, const RopeScalingConfig& scaling) {
  auto omega = rope_frequencies(head_dim, base, scaling);
  auto theta = at::outer(at::arange(max_seq_len, at::kDouble), omega);  // p * omega_i
  cos_ = theta.cos();
  sin_ = theta.sin();
}

const std::pair<at::Tensor, at::Tensor>& Rope::tables(const at::Device& device, at::ScalarType dtype) const {
  auto key = std::make_pair(device.str(), dtype);
  auto it = cache_.find(key);
  if (it == cache_.end())
    it = cache_.emplace(key, std::make_pair(cos_.to(device, dtype), sin_.to(device, dtype))).first;
  return it->second;
}

at::Tensor Rope::apply(const at::Tensor& x, int64_t offset) const {
  const int64_t T = x.size(-2);
  if (offset + T > cos_.size(0))
    throw Error("sequence of length " + std::to_string(offset + T) +
                " exceeds model.max_seq_len = " + std::to_string(cos_.size(0)));
  const auto dtype = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const auto& [cos_all, sin_all] = tables(x.device(), dtype);
  return rope::rotate(rope::rotates_in_input_dtype(x) ? x : x.to(dtype), cos_all, sin_all, offset);
}

}  // namespace ember
