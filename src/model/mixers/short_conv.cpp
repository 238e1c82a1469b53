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
  const int64_t k = taps.size(1);
  // conv1d correlates: output t reads padded inputs t .. t+k-1, i.e. u_{t-k+1} .. u_t, so the
  // taps are reversed to put w_m on u_{t-m}; k - 1 zeros on the left keep it causal.
  auto padded = at::constant_pad_nd(u.transpose(1, 2), {k - 1, 0});  // [B, d, T + k - 1]
  auto c = at::conv1d(padded, taps.flip(1).unsqueeze(1), std::nullopt, at::IntArrayRef{1}, at::IntArrayRef{0},
                      at::IntArrayRef{1}, taps.size(0));
  return c.transpose(1, 2);  // c_t = sum_m w_m (.) u_{t-m}
}

at::Tensor ShortConv::forward(const at::Tensor& x, const Rope&) {
  auto u = at::linear(x, w_in_);                                         // u = x W_in
  return at::linear(at::silu(causal_depthwise_conv(u, taps_)), w_out_);  // y = SiLU(conv(u)) W_out
}

}  // namespace ember
