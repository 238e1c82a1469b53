#include "ember/model/mixers/short_conv.h"

#include <cmath>

#include "kernels/projections.h"
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

at::Tensor causal_depthwise_conv(const at::Tensor& u, const at::Tensor& taps, const at::Tensor& before) {
  const int64_t k = taps.size(1), T = u.size(1);
  // k - 1 rows before the first token (zeros at the start keep it causal); window j of the padded
  // sequence holds u_{t-k+1+j} at position t, weighed by tap j (k multiply-adds: k is a handful).
  const auto padded = before.defined() ? at::cat({before, u}, 1) : at::constant_pad_nd(u, {0, 0, k - 1, 0});
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

double ShortConv::activation_bytes_per_token(int64_t elem) const {
  const int64_t input = projections::saved_bytes_per_row(w_in_.size(1), 4, elem, 1, false);  // the stream's fp32
  // u and SiLU's output as W_out keeps it in `elem`; the convolution's output in fp32 (fp32 taps promote)
  return static_cast<double>(input + (2 * elem + 4) * w_in_.size(0));
}

namespace {
struct ShortConvWindow final : MixerState {
  at::Tensor tail;  // [B, k - 1, d]: the last rows of u
};
}  // namespace

at::Tensor ShortConv::decode(const at::Tensor& x, const Rope&, std::unique_ptr<MixerState>& state) {
  if (!state) state = std::make_unique<ShortConvWindow>();
  auto& window = static_cast<ShortConvWindow&>(*state);
  const int64_t k = taps_.size(1);
  auto u = at::linear(x, w_in_);
  if (!window.tail.defined()) window.tail = at::zeros({x.size(0), k - 1, u.size(2)}, u.options());
  auto y = at::linear(at::silu(causal_depthwise_conv(u, taps_, window.tail)), w_out_);
  window.tail = at::cat({window.tail, u}, 1).narrow(1, u.size(1), k - 1);
  window.position += x.size(1);
  return y;
}

}  // namespace ember
