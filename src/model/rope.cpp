#include "ember/model/rope.h"

#include "ember/util/error.h"

namespace ember {

Rope::Rope(int64_t head_dim, int64_t max_seq_len, double base) {
  const int64_t half = head_dim / 2;
  auto i = at::arange(half, at::kDouble);
  auto omega = at::pow(base, -2.0 * i / static_cast<double>(head_dim));  // base^(-2i/d_h)
  auto theta = at::outer(at::arange(max_seq_len, at::kDouble), omega);   // p * omega_i
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
  const int64_t T = x.size(-2), half = x.size(-1) / 2;
  if (offset + T > cos_.size(0))
    throw Error("sequence of length " + std::to_string(offset + T) +
                " exceeds model.max_seq_len = " + std::to_string(cos_.size(0)));
  const auto dtype = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const auto& [cos_all, sin_all] = tables(x.device(), dtype);
  auto cos = cos_all.narrow(0, offset, T), sin = sin_all.narrow(0, offset, T);
  const auto xt = x.to(dtype);
  auto xa = xt.narrow(-1, 0, half), xb = xt.narrow(-1, half, half);
  return at::cat({xa * cos - xb * sin, xb * cos + xa * sin}, -1);
}

}  // namespace ember
