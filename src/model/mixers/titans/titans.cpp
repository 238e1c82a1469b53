#include "ember/model/mixers/titans/titans.h"

#include <algorithm>
#include <cmath>

#include "ember/model/autocast.h"
#include "kernels/projections.h"
#include "kernels/rms_norm.h"
#include "ember/kernels/kernel_choice.h"
#include "ember/model/init.h"
#include "ember/model/mixers/short_conv.h"
#include "ember/model/mixers/titans/windowed_attention.h"
#include "ember/model/nonfinite_trace.h"

namespace ember {

void TitansConfig::fields(FieldVisitor& v) {
  v.field("chunk_size", chunk_size, Bound::positive());
  v.choice("retrieval", retrieval);
  v.added_choice("memory", memory, MemoryForm::mlp);
  v.field("memory_expansion", memory_expansion, Bound::positive());
  v.added_field("memory_residual", memory_residual, true);
  v.field("theta_max", theta_max, Bound::non_negative());
  v.field("theta_bias", theta_bias);
  v.field("eta_bias", eta_bias);
  v.field("alpha_bias", alpha_bias);
  v.added_field("inner_grad_clip", inner_grad_clip, 0.0, Bound::non_negative());  // before: unclipped
  v.added_choice("inner_step", inner_step, InnerStep::plain);
  v.field("conv_kernel", conv_kernel, Bound::positive());
  v.field("persistent_tokens", persistent_tokens, Bound::non_negative());
  v.choice("variant", variant);
  v.field("window", window, Bound::positive());
}

Titans::Titans(const MixerContext& ctx, const TitansConfig& cfg)
    : cfg_(cfg), n_heads_(ctx.n_heads), head_dim_(ctx.head_dim) {
  const int64_t d = ctx.d_model, hd = n_heads_ * head_dim_, m = cfg.memory_expansion * head_dim_;
  const char* names[3] = {"wq", "wk", "wv"};
  for (int i = 0; i < 3; ++i) {
    w_qkv_[i] = register_parameter(names[i], normal_parameter({hd, d}, ctx.init_std));
    taps_[i] = register_parameter(std::string(names[i]) + "_taps",
                                  normal_parameter({hd, cfg.conv_kernel}, 1.0 / std::sqrt(double(cfg.conv_kernel))));
  }
  w_gates_ = register_parameter("w_gates", normal_parameter({3 * n_heads_, d}, ctx.init_std));  // theta, eta, alpha
  b_gates_ = register_parameter("b_gates", full_parameter({3, n_heads_}, 0.0));
  if (!b_gates_.is_meta()) {
    at::NoGradGuard no_grad;
    b_gates_[0].fill_(cfg.theta_bias), b_gates_[1].fill_(cfg.eta_bias), b_gates_[2].fill_(cfg.alpha_bias);
  }
  if (cfg.memory == MemoryForm::linear) {  // W_0 [d_h, d_h], Glorot-normal
    w1_ = register_parameter("w1", normal_parameter({n_heads_, head_dim_, head_dim_}, std::sqrt(1.0 / head_dim_)));
  } else {
    const double xavier = std::sqrt(2.0 / static_cast<double>(head_dim_ + m));  // Glorot-normal std
    w1_ = register_parameter("w1", normal_parameter({n_heads_, head_dim_, m}, xavier));
    w2_ = register_parameter("w2", normal_parameter({n_heads_, m, head_dim_}, xavier));
  }
  // Joined to the RMS-normalised stream, so drawn at its scale (rms 1).
  if (cfg.persistent_tokens > 0)
    persistent_ = register_parameter("persistent", normal_parameter({cfg.persistent_tokens, d}, 1.0));
  out_norm_ = register_module("out_norm", std::make_shared<RMSNorm>(head_dim_, ctx.norm_eps));
  if (cfg.variant == TitansVariant::lmm) {
    wg_ = register_parameter("wg", normal_parameter({hd, d}, ctx.init_std));
  } else {  // mag: the attention branch's projections and output norm replace the SiLU gate
    const char* attn_names[3] = {"attn_wq", "attn_wk", "attn_wv"};
    for (int i = 0; i < 3; ++i) attn_w_[i] = register_parameter(attn_names[i], normal_parameter({hd, d}, ctx.init_std));
    attn_norm_ = register_module("attn_norm", std::make_shared<RMSNorm>(head_dim_, ctx.norm_eps));
  }
  wo_ = register_parameter("wo", normal_parameter({d, hd}, ctx.out_std));
}

at::Tensor Titans::with_persistent(const at::Tensor& x) const {
  if (!persistent_.defined()) return x;
  auto p = persistent_.to(x.scalar_type()).unsqueeze(0).expand({x.size(0), -1, -1});
  return at::cat({p, x}, 1);  // x~ = P || x (Eq. 19)
}

MemoryInputs Titans::memory_inputs(const at::Tensor& x, std::vector<at::Tensor>* windows) const {
  const int64_t B = x.size(0), T = x.size(1), k = cfg_.conv_kernel;
  auto heads = [&](const at::Tensor& u) { return u.view({B, T, n_heads_, head_dim_}).transpose(1, 2); };
  auto unit = [](const at::Tensor& u) { return u * at::rsqrt(u.pow(2).sum(-1, true) + 1e-6); };  // l2 norm
  at::Tensor qkv[3];
  if (windows) windows->resize(3);
  for (int i = 0; i < 3; ++i) {
    auto u = at::linear(x, w_qkv_[i]);
    auto before = windows ? (*windows)[i] : at::Tensor();
    qkv[i] = heads(at::silu(causal_depthwise_conv(u, taps_[i], before)));  // SiLU(conv(x W))
    if (!windows) continue;
    if (!before.defined()) before = at::zeros({B, k - 1, u.size(2)}, u.options());
    (*windows)[i] = at::cat({before, u}, 1).narrow(1, T, k - 1);
  }
  auto logits = (at::linear(x, w_gates_) + b_gates_.flatten()).view({B, T, 3, n_heads_}).permute({2, 0, 3, 1});
  auto gates = at::sigmoid(logits);  // [3, B, H, T]
  return {unit(qkv[0]), unit(qkv[1]), qkv[2], cfg_.theta_max * gates[0], gates[1], gates[2]};
}

namespace {
// Bytes per row memory_inputs keeps for backward, beside its input (the linears' share): of q, k
// and v the padded projection in `elem` (the convolution's products read it; its k - 1 rows of
// padding are per sequence and left out) and the convolution's output in fp32 (fp32 taps promote;
// SiLU reads it); of q and k, SiLU's output and 1 / |.| (the l2 norm reads them; v's SiLU output is
// copied into chunks that nothing keeps); the gates' sigmoid output in fp32.
double memory_inputs_saved(int64_t hd, int64_t heads, int64_t elem) {
  return static_cast<double>(3 * (elem + 4) * hd + 2 * 4 * (hd + heads) + 4 * 3 * heads);
}
}  // namespace

MemoryState Titans::initial_state(int64_t batch) const {
  auto w1 = w1_.unsqueeze(0).expand({batch, -1, -1, -1});
  auto w2 = w2_.defined() ? w2_.unsqueeze(0).expand({batch, -1, -1, -1})
                          : at::zeros({batch, n_heads_, 0, head_dim_}, w1_.options());  // linear: empty
  return {w1, w2, at::zeros_like(w1), at::zeros_like(w2), true};
}

at::Tensor Titans::scan(MemoryState& state, const MemoryInputs& in) const {
  NoAutocastScope fp32(in.q.device());  // the inner loop accumulates over the sequence: never in bf16
  const auto wide = at::promote_types(in.q.scalar_type(), at::kFloat);
  auto up = [wide](const at::Tensor& x) { return x.to(wide); };
  MemoryInputs wide_in{up(in.q), up(in.k), up(in.v), up(in.theta), up(in.eta), up(in.alpha)};
  return memory_scan(state, wide_in, cfg_.memory_rule());
}

at::Tensor Titans::output(const at::Tensor& x, const at::Tensor& y, const at::Tensor& a) const {
  const int64_t B = x.size(0), T = x.size(1);
  at::Tensor combined;
  if (a.defined())  // o = RMSNorm_a(a) * sigmoid(RMSNorm_m(M(x~)))   (MAG, Eq. 28)
    combined = attn_norm_->forward(a.transpose(1, 2)) * at::sigmoid(out_norm_->forward(y.transpose(1, 2)));
  else  // RMSNorm_head(y) * SiLU(x W_g)
    combined = out_norm_->forward(y.transpose(1, 2)) * at::silu(at::linear(x, wg_)).view({B, T, n_heads_, head_dim_});
  return at::linear(combined.reshape({B, T, n_heads_ * head_dim_}).to(x.scalar_type()), wo_);
}

namespace {
// Bytes per row output() keeps, beside its norms' own and its input's: lmm: x W_g and its SiLU
// (`elem`), the normalised y (fp32, the product reads both factors) and the product as W_O reads
// it (`elem`); mag: the normalised a (`elem`), sigmoid's output (fp32) and the product as W_O reads it.
double output_saved(int64_t hd, int64_t elem, bool mag) {
  return static_cast<double>(mag ? (2 * elem + 4) * hd : (3 * elem + 4) * hd);
}
}  // namespace

struct AttentionWindowCache {
  at::Tensor k, v, positions;  // keys after RoPE; persistent keys have negative positions
};

at::Tensor Titans::attention_branch(const at::Tensor& ext, const Rope& rope, int64_t n_persistent, int64_t offset,
                                    AttentionWindowCache* cache) const {
  const int64_t B = ext.size(0), L = ext.size(1);
  auto heads = [&](const at::Tensor& w) {
    return at::linear(ext, w).view({B, L, n_heads_, head_dim_}).transpose(1, 2);
  };
  auto rotate = [&](const at::Tensor& t) {  // persistent rows carry no position
    if (n_persistent == 0) return rope.apply(t, offset);
    return at::cat({t.narrow(2, 0, n_persistent), rope.apply(t.narrow(2, n_persistent, L - n_persistent), offset)}, 2);
  };
  auto q = rotate(heads(attn_w_[0])), k = rotate(heads(attn_w_[1])), v = heads(attn_w_[2]);
  const auto q_pos =
      at::arange(offset - n_persistent, offset + L - n_persistent, at::TensorOptions(at::kLong).device(ext.device()));
  auto k_pos = q_pos;
  if (cache) {
    if (cache->k.defined()) {
      k = at::cat({cache->k, k}, 2), v = at::cat({cache->v, v}, 2);
      k_pos = at::cat({cache->positions, q_pos});
    }
    const int64_t next = offset + L - n_persistent;  // the next token's position
    const auto keep = (k_pos < 0).logical_or(k_pos > next - cfg_.window).nonzero().squeeze(1);
    cache->k = k.index_select(2, keep), cache->v = v.index_select(2, keep),
    cache->positions = k_pos.index_select(0, keep);
  }
  return windowed_attention(q, k, v, q_pos, k_pos, cfg_.window);
}

namespace {
// Bytes per row attention_branch keeps beside its input: q, k (RoPE's output joined to the
// persistent rows), v and SDPA's output in `elem`, and its fp32 log-sum-exp per head.
double attention_branch_saved(int64_t hd, int64_t heads, int64_t elem) {
  return static_cast<double>(4 * elem * hd + 4 * heads);
}
}  // namespace

at::Tensor Titans::forward(const at::Tensor& x, const Rope& rope) {
  auto ext = with_persistent(x);
  const int64_t n_p = ext.size(1) - x.size(1);
  auto state = initial_state(x.size(0));
  MemoryInputs in;
  {
    TraceScope scope("memory inputs");
    in = memory_inputs(ext, nullptr);
  }
  at::Tensor y, a;
  {
    TraceScope scope("memory");
    y = scan(state, in);
  }
  if (cfg_.variant == TitansVariant::mag) {
    TraceScope scope("attention");
    a = attention_branch(ext, rope, n_p, 0, nullptr);
  }
  TraceScope scope("output");
  return output(ext, y, a).narrow(1, n_p, x.size(1));  // persistent rows dropped
}

namespace {
struct MemoryCarry final : MixerState {
  std::vector<at::Tensor> windows;  // the convolutions' last inputs
  MemoryState chunk_start;          // the memory at the start of the current chunk
  MemoryInputs pending;             // the current chunk's tokens so far (undefined: none)
  AttentionWindowCache window;      // mag
};
}  // namespace

at::Tensor Titans::decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state) {
  const bool first = !state;
  if (first) state = std::make_unique<MemoryCarry>();
  auto& carry = static_cast<MemoryCarry&>(*state);
  auto ext = first ? with_persistent(x) : x;
  const int64_t n_p = ext.size(1) - x.size(1);
  if (first) carry.chunk_start = initial_state(x.size(0));
  auto fresh = memory_inputs(ext, &carry.windows);
  auto all = carry.pending.q.defined() ? carry.pending.then(fresh) : fresh;
  // Complete chunks advance the chunk-start memory; the rest is read from it and kept.
  const int64_t complete = all.length() / cfg_.chunk_size * cfg_.chunk_size, rest = all.length() - complete;
  std::vector<at::Tensor> ys;
  if (complete > 0) ys.push_back(scan(carry.chunk_start, all.narrow(0, complete)));
  if (rest > 0) {
    MemoryState scratch = carry.chunk_start;
    ys.push_back(scan(scratch, all.narrow(complete, rest)));
  }
  carry.pending = rest > 0 ? all.narrow(complete, rest) : MemoryInputs{};
  auto y = at::cat(ys, 2);
  at::Tensor a;
  if (cfg_.variant == TitansVariant::mag) a = attention_branch(ext, rope, n_p, carry.position, &carry.window);
  carry.position += x.size(1);
  auto out = output(ext, y.narrow(2, y.size(2) - ext.size(1), ext.size(1)), a);
  return out.narrow(1, n_p, x.size(1));
}

int64_t Titans::extra_flops_per_token(int64_t seq_len) const {
  const int64_t m = w1_.size(2), C = std::min(cfg_.chunk_size, std::max<int64_t>(seq_len, 1)), dh = head_dim_;
  // Per head and token: keys through W1, W2 and the gradient back through W2 (6 d_h m); the query
  // through W1, S1, W2, S2 (8 d_h m); the four end-of-chunk updates (8 d_h m); the C x C masked
  // products (4 C (d_h + m)) and their coefficients (2 C^2).
  // Linear: k W, q W, q S and the two updates (10 d_h^2), the C x C products (4 C d_h).
  const int64_t memory = w2_.defined() ? n_heads_ * (22 * dh * m + 4 * C * (dh + m) + 2 * C * C)
                                       : n_heads_ * (10 * dh * dh + 4 * C * dh + 2 * C * C);
  // The block counts 2 FLOPs per element of every >= 2-D parameter; W1_0, W2_0 and the persistent
  // tokens are not multiplied per token that way (their use is counted above).
  const int64_t not_matmuls = w1_.numel() + (w2_.defined() ? w2_.numel() : 0) +
                              (persistent_.defined() ? persistent_.numel() : 0);
  // mag: QK^T and PV over the window and the persistent keys, forward, per query token.
  const int64_t seen = std::min(cfg_.window, std::max<int64_t>(seq_len, 1)) + cfg_.persistent_tokens;
  const int64_t attention = cfg_.variant == TitansVariant::mag ? 4 * n_heads_ * head_dim_ * seen : 0;
  return memory + attention - 2 * not_matmuls;
}

double Titans::activation_bytes_per_token(int64_t elem) const {
  const int64_t hd = n_heads_ * head_dim_, m = w2_.defined() ? w1_.size(2) : 0;  // linear: no hidden layer
  const bool mag = cfg_.variant == TitansVariant::mag;
  const bool fused_norm = kernels::path(kernels::Op::norm) != kernels::Path::aten;
  // The stream's fp32 rows as the linears of q, k, v, the gates and W_g (mag: the attention's q,
  // k, v) read them; what each part keeps beside; the memory in fp32; the output norms per head.
  const int64_t input = projections::saved_bytes_per_row(w_gates_.size(1), 4, elem, mag ? 7 : 5, false);
  double bytes = static_cast<double>(input) + memory_inputs_saved(hd, n_heads_, elem) +
                 static_cast<double>(n_heads_) * memory_scan_saved_bytes_per_token(head_dim_, m, cfg_.memory_rule()) +
                 output_saved(hd, elem, mag) + static_cast<double>(n_heads_ * out_norm_->saved_bytes_per_token());
  // mag: the attention norm reads SDPA's output; in bf16 through ATen's rms_norm, which keeps it in fp32
  const int64_t attention_norm = elem == 4 ? rms_norm::saved_bytes_per_row(head_dim_, 4, fused_norm)
                                           : rms_norm::saved_bytes_per_row(head_dim_, 4, false);
  if (mag) bytes += attention_branch_saved(hd, n_heads_, elem) + static_cast<double>(n_heads_ * attention_norm);
  return bytes;
}

}  // namespace ember
