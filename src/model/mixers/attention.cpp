#include "ember/model/mixers/attention.h"
#include "ember/model/init.h"

#include <cmath>
#include <limits>

namespace ember {

void AttentionConfig::fields(FieldVisitor& v) { v.choice("impl", impl); }

void GatedAttentionConfig::fields(FieldVisitor& v) {
  v.choice("impl", impl);
  v.choice("gate", gate);
}

Attention::Attention(const MixerContext& ctx, AttentionImpl impl, Gate gate)
    : n_heads_(ctx.n_heads), n_kv_heads_(ctx.n_kv_heads), head_dim_(ctx.head_dim), impl_(impl), gate_(gate) {
  const int64_t d = ctx.d_model;
  const double std = ctx.init_std, out_std = ctx.out_std;
  wq_ = register_parameter("wq", normal_parameter({n_heads_ * head_dim_, d}, std));
  wk_ = register_parameter("wk", normal_parameter({n_kv_heads_ * head_dim_, d}, std));
  wv_ = register_parameter("wv", normal_parameter({n_kv_heads_ * head_dim_, d}, std));
  wo_ = register_parameter("wo", normal_parameter({d, n_heads_ * head_dim_}, out_std));
  if (gate_ != Gate::none)  // W_theta, N(0, init_std) like every projection, no bias: G ~ 0.5 at init
    wg_ = register_parameter("wg", normal_parameter({n_heads_ * (gate_ == Gate::elementwise ? head_dim_ : 1), d}, std));
}

at::Tensor Attention::gate_values(const at::Tensor& x) const {
  if (!wg_.defined()) return {};
  const int64_t width = gate_ == Gate::elementwise ? head_dim_ : 1;
  return at::sigmoid(at::linear(x, wg_)).view({x.size(0), x.size(1), n_heads_, width});  // G = sigmoid(X W_theta)
}

namespace {
// P = softmax(Q K^T / sqrt(d_h) + causal mask) in >= fp32. q, k [B, H, T, d_h].
at::Tensor causal_probabilities(const at::Tensor& q, const at::Tensor& k) {
  const int64_t T = q.size(-2);
  const auto ct = q.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  auto scores = at::matmul(q.to(ct), k.to(ct).transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  auto future =
      at::ones({T, T}, at::TensorOptions(at::kBool).device(q.device())).triu(1);  // mask_{ij} = -inf for j > i
  return at::softmax(scores.masked_fill(future, -std::numeric_limits<double>::infinity()), -1);
}
}  // namespace

at::Tensor Attention::heads(const at::Tensor& x, const at::Tensor& w, int64_t h) const {
  return at::linear(x, w).view({x.size(0), x.size(1), h, head_dim_}).transpose(1, 2);  // [B, h, T, d_h]
}

at::Tensor Attention::attention_probabilities(const at::Tensor& x, const Rope& rope) const {
  auto q = rope.apply(heads(x, wq_, n_heads_)), k = rope.apply(heads(x, wk_, n_kv_heads_));
  if (n_kv_heads_ != n_heads_) k = k.repeat_interleave(n_heads_ / n_kv_heads_, 1);
  return causal_probabilities(q, k);
}

at::Tensor Attention::reference_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return at::matmul(causal_probabilities(q, k).to(v.scalar_type()), v);
}

at::Tensor Attention::forward(const at::Tensor& x, const Rope& rope) {
  const int64_t B = x.size(0), T = x.size(1);
  auto q = rope.apply(heads(x, wq_, n_heads_));
  auto k = rope.apply(heads(x, wk_, n_kv_heads_));
  auto v = heads(x, wv_, n_kv_heads_);
  if (n_kv_heads_ != n_heads_) {  // GQA: each KV head serves n_heads/n_kv_heads query heads
    k = k.repeat_interleave(n_heads_ / n_kv_heads_, 1);
    v = v.repeat_interleave(n_heads_ / n_kv_heads_, 1);
  }
  auto y = impl_ == AttentionImpl::reference ? reference_attention(q, k, v)
                                             : at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
  y = y.transpose(1, 2);                      // [B, T, H, d_h]
  if (wg_.defined()) y = y * gate_values(x);  // Y'_h = Y_h (.) G_h, before concat and W_O (G1)
  return at::linear(y.reshape({B, T, n_heads_ * head_dim_}), wo_);
}

int64_t Attention::extra_flops_per_token(int64_t seq_len) const {
  return 2 * 2 * n_heads_ * head_dim_ * seq_len;  // QK^T and PV, forward, per query token
}

}  // namespace ember
