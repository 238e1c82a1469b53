#include "ember/model/rope.h"

#include "ember/util/error.h"

namespace ember {

Rope::Rope(int64_t head_dim, int64_t max_seq_len, double base) {
  const int64_t half = head_dim / 2;
  auto i = at::arange(half, at::kDouble);
  auto omega = at::pow(base, -2.0 * i / static_cast<double>(head_dim));  // base^(-2i/d_h)
  auto theta = at::outer(at::arange(max_seq_len, at::kDouble), omega);   // p * omega_i
  cos_ = theta.cos().to(at::kFloat);
  sin_ = theta.sin().to(at::kFloat);
}

at::Tensor Rope::apply(const at::Tensor& x, int64_t offset) const {
  const int64_t T = x.size(-2), half = x.size(-1) / 2;
  if (offset + T > cos_.size(0))
    throw Error("sequence of length " + std::to_string(offset + T) +
                " exceeds model.max_seq_len = " + std::to_string(cos_.size(0)));
  auto cos = cos_.narrow(0, offset, T).to(x.scalar_type());
  auto sin = sin_.narrow(0, offset, T).to(x.scalar_type());
  auto xa = x.narrow(-1, 0, half), xb = x.narrow(-1, half, half);
  return at::cat({xa * cos - xb * sin, xb * cos + xa * sin}, -1);
}

}  // namespace ember
