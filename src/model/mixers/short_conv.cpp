#include "ember/model/mixers/short_conv.h"

#include <cmath>

#include "ember/model/init.h"

namespace ember {

ShortConv::ShortConv(const MixerContext& ctx, const ShortConvConfig& cfg) {
  const int64_t d = ctx.d_model;
  w_in_ = register_parameter("w_in", normal_parameter({d, d}, ctx.init_std));
  // Variance-preserving for independent inputs: Var(c) = k Var(w) Var(u) = Var(u).
  taps_ =
      register_parameter("taps", normal_parameter({d, cfg.kernel}, 1.0 / std::sqrt(static_cast<double>(cfg.kernel))));
  w_out_ = register_parameter("w_out", normal_parameter({d, d}, ctx.out_std));
}

at::Tensor causal_depthwise_conv(const at::Tensor& u, const at::Tensor& taps) {
  const int64_t k = taps.size(1), T = u.size(1);
  // k - 1 zeros before the first token keep it causal; window j of the padded sequence holds
  // u_{t-k+1+j} at position t, weighed by tap j (k multiply-adds: k is a handful).
  const auto padded = at::constant_pad_nd(u, {0, 0, k - 1, 0});  // [B, T + k - 1, d]
  at::Tensor c;
  for (int64_t j = 0; j < k; ++j) {
    auto term = padded.narrow(1, j, T) * taps.select(1, j);
    c = c.defined() ? c + term : term;
  }
  return c;  // c_t = sum_j w_j (.) u_{t-k+1+j}
}

at::Tensor ShortConv::forward(const at::Tensor& x, const Rope&) {
  auto u = at::linear(x, w_in_);                                         // u = x W_in
  return at::linear(at::silu(causal_depthwise_conv(u, taps_)), w_out_);  // y = SiLU(conv(u)) W_out
}

}  // namespace ember
