#include "ember/model/mixers/attention.h"

#include "kernels/projections.h"
#include "ember/model/init.h"
#include "ember/util/error.h"
#include "kernels/rope.h"

#include <cmath>
#include <limits>

namespace ember {

void AttentionConfig::fields(FieldVisitor& v) { v.choice("impl", impl); }

void GatedAttentionConfig::fields(FieldVisitor& v) {
  v.choice("impl", impl);
  v.choice("gate", gate);
  v.field("match_params", match_params);
}

int64_t gate_matched_d_ff(int64_t d_ff, int64_t d_model, int64_t gate_weights) {
  const int64_t shrink = (gate_weights + 3 * d_model / 2) / (3 * d_model);  // nearest integer
  if (d_ff - shrink < 1)
    throw ConfigError("model.mixer.gated_attention.match_params: the gate's " + std::to_string(gate_weights) +
                      " weights exceed the MLP of width " + std::to_string(d_ff));
  return d_ff - shrink;
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

at::Tensor Attention::gate_of(const at::Tensor& pre) const {
  const int64_t width = gate_ == Gate::elementwise ? head_dim_ : 1;
  return at::sigmoid(pre).view({pre.size(0), pre.size(1), n_heads_, width});  // G = sigmoid(X W_theta)
}

at::Tensor Attention::gate_values(const at::Tensor& x) const {
  return wg_.defined() ? gate_of(at::linear(x, wg_)) : at::Tensor();
}

at::Tensor Attention::split_heads(const at::Tensor& y, int64_t h) const {
  return y.view({y.size(0), y.size(1), h, head_dim_}).transpose(1, 2);  // [B, h, T, d_h]
}

Attention::Projected Attention::project(const at::Tensor& x) const {
  std::vector<at::Tensor> weights{wq_, wk_, wv_};
  if (wg_.defined()) weights.push_back(wg_);
  const auto y = projections::of(x, weights);  // one GEMM: x [W_Q; W_K; W_V; W_theta]^T
  return {split_heads(y[0], n_heads_), split_heads(y[1], n_kv_heads_), split_heads(y[2], n_kv_heads_),
          wg_.defined() ? gate_of(y[3]) : at::Tensor()};
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

at::Tensor Attention::attention_probabilities(const at::Tensor& x, const Rope& rope) const {
  auto q = rope.apply(split_heads(at::linear(x, wq_), n_heads_));
  auto k = rope.apply(split_heads(at::linear(x, wk_), n_kv_heads_));
  if (n_kv_heads_ != n_heads_) k = k.repeat_interleave(n_heads_ / n_kv_heads_, 1);
  return causal_probabilities(q, k);
}

at::Tensor Attention::reference_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return at::matmul(causal_probabilities(q, k).to(v.scalar_type()), v);
}

at::Tensor Attention::attend(const at::Tensor& q, at::Tensor k, at::Tensor v, const at::Tensor& gate) const {
  const int64_t B = q.size(0), T = q.size(2), Tk = k.size(2);
  if (n_kv_heads_ != n_heads_) {  // GQA: each KV head serves n_heads/n_kv_heads query heads
    k = k.repeat_interleave(n_heads_ / n_kv_heads_, 1);
    v = v.repeat_interleave(n_heads_ / n_kv_heads_, 1);
  }
  at::Tensor y;
  if (Tk == T) {  // the whole sequence: the causal kernels
    y = impl_ == AttentionImpl::reference ? reference_attention(q, k, v)
                                          : at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
  } else {  // new queries after cached keys: query i at position Tk - T + i sees keys 0 .. Tk - T + i
    const auto opts = at::TensorOptions(at::kLong).device(q.device());
    const auto visible = at::arange(Tk, opts).unsqueeze(0) <= at::arange(Tk - T, Tk, opts).unsqueeze(1);  // [T, Tk]
    y = at::scaled_dot_product_attention(q, k, v, visible);
  }
  y = y.transpose(1, 2);                      // [B, T, H, d_h]
  if (gate.defined()) y = y * gate;  // Y'_h = Y_h (.) G_h, before concat and W_O (G1)
  return at::linear(y.reshape({B, T, n_heads_ * head_dim_}), wo_);
}

at::Tensor Attention::forward(const at::Tensor& x, const Rope& rope) {
  const auto p = project(x);
  return attend(rope.apply(p.q), rope.apply(p.k), p.v, p.gate);
}

namespace {
struct KvCache final : MixerState {
  at::Tensor k, v;  // [B, H_kv, tokens, d_h], keys after RoPE
};
}  // namespace

at::Tensor Attention::decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state) {
  if (!state) state = std::make_unique<KvCache>();
  auto& cache = static_cast<KvCache&>(*state);
  const int64_t offset = cache.position;
  const auto p = project(x);
  auto q = rope.apply(p.q, offset), k = rope.apply(p.k, offset);
  cache.k = cache.k.defined() ? at::cat({cache.k, k}, 2) : k;
  cache.v = cache.v.defined() ? at::cat({cache.v, p.v}, 2) : p.v;
  cache.position += x.size(1);
  return attend(q, cache.k, cache.v, p.gate);
}

double Attention::activation_bytes_per_token(int64_t elem) const {
  const double d = static_cast<double>(n_heads_ * head_dim_), e = static_cast<double>(elem);
  // The input as the projections keep it (in the matmul dtype: input_precision), what RoPE keeps of
  // q and k (kernels/rope.h); ATen's SDPA keeps q, k, v (GQA: expanded to every head) and its
  // output, plus an fp32 log-sum-exp per head; W_O keeps that output, which SDPA writes as
  // [B, T, H, d_h] (the reshape is a view). A gate keeps its sigmoid and the ungated output.
  const int64_t input = projections::saved_bytes_per_row(wq_.size(1), elem, elem, wg_.defined() ? 4 : 3,
                                                        projections::stacked_in_estimate());
  double bytes = static_cast<double>(input + 2 * rope::saved_bytes_per_row()) + 4 * e * d +
                 4.0 * static_cast<double>(n_heads_);
  if (gated()) bytes += e * d + e * static_cast<double>(wg_.size(0));
  return bytes;
}

int64_t Attention::extra_flops_per_token(int64_t seq_len) const {
  return 2 * 2 * n_heads_ * head_dim_ * seq_len;  // QK^T and PV, forward, per query token
}

int64_t Attention::causal_masked_flops_per_token(int64_t seq_len) const {
  return extra_flops_per_token(seq_len) / 2;  // a query sees (T + 1) / 2 keys on average: halved
}

}  // namespace ember
