// The neural long-term memory of Titans (Behrouz, Zhong & Mirrokni, arXiv 2501.00663; docs/mixers.md,
// "Titans"): per head a residual MLP M(z) = z + SiLU(z W1) W2 (or a linear M(z) = z + z W; either
// without the residual on request) whose weights are trained inside the
// forward pass on the associative loss ||M(k_t) - v_t||^2 / d_h (Eq. 12; the mean over features,
// as lucidrains/titans-pytorch: the paper's constant is absorbed into theta) with momentum and forgetting,
//   S_t = eta_t S_{t-1} - theta_t grad loss_t(M_{t'}),   M_t = (1 - alpha_t) M_{t-1} + S_t   (Eq. 13-14)
// where t' is the start of t's chunk (Eq. 16). memory_scan is the exact chunk-parallel algorithm
// (inner gradient written out analytically); memory_scan_reference is the token-by-token oracle.
#pragma once
#include <ATen/ATen.h>

#include "ember/config/enum_names.h"

namespace ember {

// Which memory a query reads: after its own token's update (variant A, TTT / TNT), before it
// (variant B, Nested Learning's o_t = M_{t-1}(q_t)), or the chunk-start memory (the cheaper
// chunk-level approximation).
enum class Retrieval { after, before, chunk };
inline std::span<const EnumName<Retrieval>> enum_names(Retrieval) {
  static constexpr EnumName<Retrieval> names[] = {
      {Retrieval::after, "after"}, {Retrieval::before, "before"}, {Retrieval::chunk, "chunk"}};
  return names;
}

// The size of a token's write. plain: theta_t times the gradient (Eq. 13). normalized: the gradient
// divided by (2 / d_h) lambda, lambda = ||J||_F^2 / d_h the mean eigenvalue of J J^T for J = dM(k)/dW
// at the chunk-start weights, so that theta_t = 1 moves M(k) about all the way to v whatever the
// memory's scale (normalised LMS; for a linear memory, the delta rule's beta = theta).
enum class InnerStep { plain, normalized };
inline std::span<const EnumName<InnerStep>> enum_names(InnerStep) {
  static constexpr EnumName<InnerStep> names[] = {{InnerStep::plain, "plain"}, {InnerStep::normalized, "normalized"}};
  return names;
}

// How the memory learns and is read: chunks are [jC, (j+1)C) of the tokens (the last may be short);
// within a chunk every gradient is taken at the chunk-start weights; each token's gradient is
// clipped to norm `grad_clip` (0: not clipped), after the normalisation if any; `residual` picks
// M(z) = z + MLP(z) or M(z) = MLP(z).
struct MemoryRule {
  int64_t chunk = 16;
  Retrieval retrieval = Retrieval::after;
  double grad_clip = 0.0;
  bool residual = true;
  InnerStep step = InnerStep::plain;
};

// Fast weights of a batch of sequences, per head: W1 [B, H, d_h, m], W2 [B, H, m, d_h] and their
// momenta S1, S2 (same shapes). A linear memory (L_M = 1), M(z) = [z +] z W, keeps W [B, H, d_h, d_h]
// in W1 and S1, with W2 and S2 empty ([B, H, 0, d_h]); every function here takes either.
// fresh: S1 and S2 are zero (a memory's start), so that the first chunk skips their terms; the
// state memory_scan leaves is never fresh.
struct MemoryState {
  at::Tensor w1, w2, s1, s2;
  bool fresh = false;
};

// Per-token inputs, per head: q, k, v [B, H, T, d_h]; theta, eta, alpha [B, H, T].
struct MemoryInputs {
  at::Tensor q, k, v, theta, eta, alpha;
  int64_t length() const { return q.size(2); }
  MemoryInputs narrow(int64_t start, int64_t length) const;
  MemoryInputs then(const MemoryInputs& next) const;  // the tokens of both, this first
};

// M(z) = z + SiLU(z W1) W2 for z [B, H, n, d_h]; without the residual, M(z) = SiLU(z W1) W2; a
// linear memory (empty W2): [z +] z W1.
at::Tensor memory_read(const at::Tensor& w1, const at::Tensor& w2, const at::Tensor& z, bool residual = true);

// grad of ||M(k) - v||^2 / d_h w.r.t. W1 and W2 for one token per (batch, head): k, v [B, H, d_h] ->
// {[B, H, d_h, m], [B, H, m, d_h]}, written out (the oracle's and the tests' per-token gradient).
std::pair<at::Tensor, at::Tensor> memory_gradient(const at::Tensor& w1, const at::Tensor& w2, const at::Tensor& k,
                                                  const at::Tensor& v, bool residual = true);

// Each token's gradient u = (u1, u2) scaled to Frobenius norm at most `clip`:
// u * min(1, clip / ||u||); clip <= 0 leaves it (docs/mixers.md, "Titans: a bounded inner step").
std::pair<at::Tensor, at::Tensor> clip_gradient(const at::Tensor& u1, const at::Tensor& u2, double clip);
inline std::pair<at::Tensor, at::Tensor> clip_gradient(const std::pair<at::Tensor, at::Tensor>& u, double clip) {
  return clip_gradient(u.first, u.second, clip);
}

// ||J||_F^2 for J = dM(k)/d(W1, W2), from d_h gradients of rows of J (memory_gradient with targets
// that make dloss/dM(k) each unit vector in turn): k [B, H, d_h] -> [B, H, 1, 1]. For the oracle.
at::Tensor memory_jacobian_norm_squared(const at::Tensor& w1, const at::Tensor& w2, const at::Tensor& k, bool residual);

// Outputs y [B, H, T, d_h] of the tokens `in` read from a memory starting at `state`, which is
// advanced to the state after the last token.
at::Tensor memory_scan(MemoryState& state, const MemoryInputs& in, const MemoryRule& rule);
// Bytes per token and head that memory_scan keeps for backward in fp32, for head width d_h and
// hidden width m (0: a linear memory), over whole chunks of rule.chunk tokens: the sum of what its
// ops save, declared beside each (neural_memory.cpp: chunk_plan_saved, memory_chunk_saved,
// linear_memory_chunk_saved); tests/unit/test_saved_bytes.cpp measures it. Per sequence it is off
// by: a short last chunk (a whole chunk's state for fewer tokens); a fresh memory's first chunk
// (memory_scan_fresh_bytes_less); of an MLP memory, the last chunk's (Kc_n theta) G and (E_n theta)
// G (nothing reads the end state), n (m + 2 d_h) less; with retrieval chunk, the last chunk's
// whole step less (its gradient reaches no output).
double memory_scan_saved_bytes_per_token(int64_t head_dim, int64_t hidden, const MemoryRule& rule);
// Bytes per head and sequence that a fresh memory's first chunk keeps less than that (S1, S2 = 0:
// their terms are left out): a per-sequence term, 1 / (T / chunk) of a chunk's share.
double memory_scan_fresh_bytes_less(int64_t head_dim, int64_t hidden, const MemoryRule& rule);

// The same, one token at a time with materialised per-token gradients: for tests only.
at::Tensor memory_scan_reference(MemoryState& state, const MemoryInputs& in, const MemoryRule& rule);

}  // namespace ember
