#include "ember/model/mixers/titans/neural_memory.h"

#include <array>
#include <vector>

#include "ember/model/mlp.h"  // silu_derivative
#include "ember/model/inner_clip.h"
#include "ember/model/nonfinite_trace.h"

namespace ember {
namespace {

at::Tensor transposed(const at::Tensor& x) { return x.transpose(-1, -2); }

// Per-token scalars as [B, H, n, 1] so they scale rows.
at::Tensor rows(const at::Tensor& x) { return x.unsqueeze(-1); }

// Inclusive cumulative product along `dim` by doubling (log2 n multiplies by a shifted copy): exact
// with zeros, unlike exp of a log-cumsum, and made of ops whose backward every device has,
// the meta device included (ATen's cumprod backward flips, which has no meta kernel).
at::Tensor cumulative_product(at::Tensor x, int64_t dim) {
  const int64_t n = x.size(dim);
  for (int64_t shift = 1; shift < n; shift *= 2)
    x = x * at::cat({at::ones_like(x.narrow(dim, 0, shift)), x.narrow(dim, 0, n - shift)}, dim);
  return x;
}

// Tensors the size of x that cumulative_product keeps for backward: each step's x and its shifted copy.
int64_t cumulative_product_saved(int64_t n) {
  int64_t steps = 0;
  for (int64_t shift = 1; shift < n; shift *= 2) ++steps;
  return 2 * steps;
}

// X[s, i] = prod_{j = i+1 .. s} f_j for i <= s, else 0: a masked cumulative product (no logs, so
// f_j = 0 is exact). f [B, H, n] -> [B, H, n, n].
at::Tensor product_matrix(const at::Tensor& f) {
  const int64_t n = f.size(-1);
  auto index = at::arange(n, f.options().dtype(at::kLong));
  auto later = index.unsqueeze(1) > index.unsqueeze(0);              // s > i
  auto factors = at::where(later, rows(f), at::ones_like(rows(f)));  // row s: f_s right of the diagonal
  return cumulative_product(factors, -2).masked_fill(index.unsqueeze(1) < index.unsqueeze(0), 0.0);
}

// The gate products of chunks of tokens, which depend on the gates alone (docs/mixers.md, Titans
// step 2): E[s,i] = prod_{i<j<=s} eta_j, D[tau,s] = prod_{s<j<=tau} (1 - alpha_j), their product Kc
// (W_tau's weight on token i's gradient), the inclusive products p of eta and a of 1 - alpha, and
// Bv (W_tau's weight on S_0). Gates [..., n] with any leading dims.
struct ChunkCoefficients {
  at::Tensor e, p, a, kc, bv;
};

ChunkCoefficients chunk_coefficients(const at::Tensor& eta, const at::Tensor& alpha) {
  auto keep = 1 - alpha;
  auto e = product_matrix(eta), d = product_matrix(keep);
  auto p = cumulative_product(eta, -1);
  return {e, p, cumulative_product(keep, -1), at::matmul(d, e), at::matmul(d, rows(p)).squeeze(-1)};
}

// Everything about a run of chunks that does not depend on the memory state, formed for all of them
// at once before the sequential loop (tensors [chunks, BH, ...], heads flattened into the batch),
// so that each chunk's step is a few batched matmuls on its state. PlanTensor names the tensors: the
// one list of them.
enum class PlanTensor {
  q, k, kv,        // kv = (2 / d_h)(k - v) (no residual: -(2 / d_h) v): G = kv + (2 / d_h) Ak W2
  qa, qb,          // rows of q scaled by A and Bv (the retrieval's rows)
  mq,              // (Kc * theta_i) * (Q K^T): the keys' gradient terms in Hq, before Dh
  kr_theta,        // Kc * theta_i: the same weights on (phi(Hq) Ak^T)
  ar, bvr,         // [.., n, 1]
  k_kc, k_e,       // K^T diag(Kc_n theta), K^T diag(E_n theta)  [.., d_h, n]
  kc_n, e_n,       // Kc_n theta, E_n theta as columns [.., n, 1]
  a_n, bv_n, p_n,  // [.., 1, 1]
  count
};

struct ChunkPlan {
  std::array<at::Tensor, static_cast<size_t>(PlanTensor::count)> tensors;

  at::Tensor& operator[](PlanTensor t) { return tensors[static_cast<size_t>(t)]; }
  const at::Tensor& operator[](PlanTensor t) const { return tensors[static_cast<size_t>(t)]; }
  // Each chunk's plan, by one unbind per tensor: its backward stacks the chunks' gradients once,
  // where a select per chunk would scatter each into a zero tensor of the whole plan and sum them.
  std::vector<ChunkPlan> chunks() const {
    std::vector<ChunkPlan> out(static_cast<size_t>(tensors[0].size(0)));
    for (size_t i = 0; i < tensors.size(); ++i) {
      auto parts = tensors[i].unbind(0);
      for (size_t j = 0; j < out.size(); ++j) out[j].tensors[i] = parts[j];
    }
    return out;
  }
};

// in: q, k, v [BH, chunks, n, d_h], gates [BH, chunks, n].
ChunkPlan chunk_plan(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& theta,
                     const at::Tensor& eta, const at::Tensor& alpha, const MemoryRule& rule) {
  const int64_t n = q.size(-2);
  const auto c = chunk_coefficients(eta, alpha);
  auto ar = c.a, bvr = c.bv, kr = c.kc;  // 3. the weights after token tau: rows of A, Bv, Kc
  if (rule.retrieval == Retrieval::before) {  // or before it: the rows above (A_0 = 1, Bv_0 = 0)
    ar = at::cat({at::ones_like(c.a.narrow(-1, 0, 1)), c.a.narrow(-1, 0, n - 1)}, -1);
    bvr = at::cat({at::zeros_like(c.bv.narrow(-1, 0, 1)), c.bv.narrow(-1, 0, n - 1)}, -1);
    kr = at::constant_pad_nd(c.kc, {0, 0, 1, 0}).narrow(-2, 0, n);
  }
  auto kr_theta = kr * theta.unsqueeze(-2);  // column i scaled by theta_i
  auto last = [n](const at::Tensor& x) { return x.select(-1, n - 1).unsqueeze(-1).unsqueeze(-1); };
  auto kc_n = rows(c.kc.select(-2, n - 1) * theta), e_n = rows(c.e.select(-2, n - 1) * theta);
  // Chunk-major and contiguous, so that each chunk's slices feed the batched matmuls without copies.
  auto major = [](const at::Tensor& x) { return x.transpose(0, 1).contiguous(); };
  using P = PlanTensor;
  ChunkPlan plan;
  plan[P::q] = q;
  plan[P::k] = k;
  plan[P::kv] = (2.0 / static_cast<double>(k.size(-1))) * (rule.residual ? k - v : -v);
  plan[P::qa] = rows(ar) * q;
  plan[P::qb] = rows(bvr) * q;
  plan[P::mq] = kr_theta * at::matmul(q, transposed(k));
  plan[P::kr_theta] = kr_theta;
  plan[P::ar] = rows(ar);
  plan[P::bvr] = rows(bvr);
  plan[P::k_kc] = transposed(kc_n * k);
  plan[P::k_e] = transposed(e_n * k);
  plan[P::kc_n] = kc_n;
  plan[P::e_n] = e_n;
  plan[P::a_n] = last(c.a);
  plan[P::bv_n] = last(c.bv);
  plan[P::p_n] = last(c.p);
  for (auto& x : plan.tensors) x = major(x);
  return plan;
}

// Floats per head that chunk_plan keeps per chunk of n tokens (what its ops save; the chunk-major
// copies are memory_chunk's): the chunked k (read by Q K^T and as K^T diag(Kc_n theta), K^T
// diag(E_n theta)); n x n: the doubling steps of product_matrix for E and D, D and E (their matmul)
// and Kc (kc_n reads it); n: theta, the doubling steps of p and a (from eta and 1 - alpha), p
// (Bv's matmul), kc_n and e_n. Retrieval after/before also reads Q diag(A), Q diag(Bv) and mq: the
// chunked q, kr_theta and Q K^T, ar and bvr; before: the padded Kc, n + 1 rows.
double chunk_plan_saved(int64_t n, int64_t dh, Retrieval retrieval) {
  const double steps = static_cast<double>(cumulative_product_saved(n)), N = static_cast<double>(n);
  const double D = static_cast<double>(dh);
  double floats = N * D + (2 * steps + 3) * N * N + (2 * steps + 4) * N;
  if (retrieval != Retrieval::chunk) floats += N * D + 2 * N * N + 2 * N;
  if (retrieval == Retrieval::before) floats += (N + 1) * N;
  return floats;
}

// ||u||_F^2 of each token's gradient u = (k^T dh, a^T g), from its vectors: the Frobenius norm of an
// outer product is the product of the vectors' norms. Rows [.., n, d] -> [.., n, 1].
at::Tensor gradient_norm_squared(const at::Tensor& k, const at::Tensor& dh, const at::Tensor& a, const at::Tensor& g) {
  auto sq = [](const at::Tensor& x) { return x.pow(2).sum(-1, true); };
  return sq(k) * sq(dh) + sq(a) * sq(g);
}

// The normalised step's divisor per token, (2 / d_h) lambda with lambda = ||J||_F^2 / d_h
//   = |SiLU(k W1)|^2 + |k|^2 sum_p SiLU'(k W1)_p^2 |W2_p|^2 / d_h   (the W2 and W1 blocks of J J^T)
// from the chunk-start weights: rows [.., n, 1].
at::Tensor normalized_step_divisor(const at::Tensor& k, const at::Tensor& ak, const at::Tensor& slope,
                                   const at::Tensor& w2) {
  const double d = static_cast<double>(k.size(-1));
  auto w1_block = at::bmm(slope.pow(2), w2.pow(2).sum(-1, true)) * k.pow(2).sum(-1, true) / d;
  return (2.0 / d) * (ak.pow(2).sum(-1, true) + w1_block);
}

bool linear(const MemoryState& st) { return st.w2.size(-2) == 0; }

// One weight's end-of-chunk update from its chunk-start W and S (Eq. 13-14 summed over the chunk):
// W' = A_n W + Bv_n S - X Y and S' = P_n S - U V; a fresh memory's S = 0 terms are left out.
std::pair<at::Tensor, at::Tensor> advanced(const at::Tensor& w, const at::Tensor& s, bool fresh, const ChunkPlan& c,
                                           const at::Tensor& x, const at::Tensor& y, const at::Tensor& u,
                                           const at::Tensor& v) {
  using enum PlanTensor;
  if (fresh) return {at::baddbmm(c[a_n] * w, x, y, 1.0, -1.0), at::bmm(u, v).neg()};
  return {at::baddbmm(at::addcmul(c[a_n] * w, c[bv_n], s), x, y, 1.0, -1.0), at::baddbmm(c[p_n] * s, u, v, 1.0, -1.0)};
}

// memory_chunk for a linear memory M(z) = [z +] z W (W in w1, S in s1): each token's gradient is
// k^T g, so ||J||_F^2 / d_h = |k|^2 and ||u|| = |k| |g|; the retrieval is Q W terms minus
// (Kc * theta * Q K^T) G, and the updates are those of W2 with K for Ak.
at::Tensor linear_memory_chunk(MemoryState& st, const ChunkPlan& c, const MemoryRule& rule) {
  using enum PlanTensor;
  const double two_over_d = 2.0 / static_cast<double>(c[k].size(-1));
  auto g = at::baddbmm(c[kv], c[k], st.w1, 1.0, two_over_d);  // dloss/dM(k) = (2 / d_h)([k +] k W - v)
  const auto k_sq = c[k].pow(2).sum(-1, true);
  if (rule.step == InnerStep::normalized) g = g / (two_over_d * k_sq);  // u / ((2 / d_h) |k|^2)
  if (rule.grad_clip > 0) g = g * inner_clip_factor(k_sq * g.pow(2).sum(-1, true), rule.grad_clip);
  at::Tensor y, skip = rule.residual ? c[q] : at::zeros_like(c[q]);
  if (rule.retrieval == Retrieval::chunk) {
    y = at::baddbmm(skip, c[q], st.w1);  // M_{chunk start}(q)
  } else {  // Y = [Q +] diag(A) Q W + diag(Bv) Q S - (Kc * theta * Q K^T) G
    y = at::baddbmm(skip, c[qa], st.w1);
    if (!st.fresh) y = at::baddbmm(y, c[qb], st.s1);
    y = at::baddbmm(y, c[mq], g, 1.0, -1.0);
  }
  auto [w, s] = advanced(st.w1, st.s1, st.fresh, c, c[k_kc], g, c[k_e], g);
  st = {w, st.w2, s, st.s2};
  return y;
}

// G's versions kept: as first formed, and after each rescaling (the normalised step, the clip).
double gradient_versions(const MemoryRule& rule) {
  return 1.0 + (rule.step == InnerStep::normalized ? 1.0 : 0.0) + (rule.grad_clip > 0 ? 1.0 : 0.0);
}

// Floats per head that linear_memory_chunk keeps per chunk of n tokens: the chunk-start W and S;
// a_n, bv_n, p_n; K, K^T diag(Kc_n theta), K^T diag(E_n theta) and G's versions [n, d_h]; the
// normalised step's divisor; the clip's |k|^2, |g|^2, their product, its rsqrt and the factor.
// Retrieval after/before: Q diag(A), Q diag(Bv) and mq; chunk: Q.
double linear_memory_chunk_saved(int64_t n, int64_t dh, const MemoryRule& rule) {
  const double N = static_cast<double>(n), D = static_cast<double>(dh);
  double floats = 2 * D * D + 3 + N * D * (3 + gradient_versions(rule));
  if (rule.step == InnerStep::normalized) floats += N;
  if (rule.grad_clip > 0) floats += 5 * N;
  floats += rule.retrieval == Retrieval::chunk ? N * D : 2 * N * D + N * N;
  return floats;
}

// 4. The end-of-chunk state, every update reading the chunk-start values.
MemoryState memory_chunk_end(const MemoryState& st, const ChunkPlan& c, const at::Tensor& ak, const at::Tensor& g,
                             const at::Tensor& dh) {
  using enum PlanTensor;
  const auto akt = transposed(ak);
  auto [w1, s1] = advanced(st.w1, st.s1, st.fresh, c, c[k_kc], dh, c[k_e], dh);
  auto [w2, s2] = advanced(st.w2, st.s2, st.fresh, c, akt, c[kc_n] * g, akt, c[e_n] * g);
  return {w1, w2, s1, s2};
}

// One chunk of n tokens from the chunk-start state (docs/mixers.md, Titans steps 1-4); tensors
// [BH, n, ...] and the state's [BH, d_h, m] / [BH, m, d_h].
at::Tensor memory_chunk(MemoryState& st, const ChunkPlan& c, const MemoryRule& rule) {
  using enum PlanTensor;
  if (linear(st)) return linear_memory_chunk(st, c, rule);
  const double two_over_d = 2.0 / static_cast<double>(c[k].size(-1));
  // 1. Keys through the chunk-start weights; per-token gradients are (k^T Dh, Ak^T G), never formed.
  auto hk = at::bmm(c[k], st.w1);
  auto sig = at::sigmoid(hk);
  auto ak = hk * sig;                                       // SiLU(hk)
  auto g = at::baddbmm(c[kv], ak, st.w2, 1.0, two_over_d);  // dloss/dM(k)
  auto slope = at::addcmul(sig, ak, 1 - sig);               // SiLU'(hk) = s + SiLU(hk)(1 - s)
  auto dh = at::bmm(g, transposed(st.w2)) * slope;          // dloss/d(k W1)
  if (rule.step == InnerStep::normalized) {  // 1b. u / ((2 / d_h) lambda): G, Dh rows by one factor
    const auto divisor = normalized_step_divisor(c[k], ak, slope, st.w2);
    g = g / divisor, dh = dh / divisor;
  }
  if (rule.grad_clip > 0) {  // 1c. each token's gradient scaled to norm <= clip: G, Dh rows by one factor
    const auto scale = inner_clip_factor(gradient_norm_squared(c[k], dh, ak, g), rule.grad_clip);
    g = g * scale, dh = dh * scale;
  }
  at::Tensor y, skip = rule.residual ? c[q] : at::zeros_like(c[q]);  // the residual's z
  if (rule.retrieval == Retrieval::chunk) {
    y = at::baddbmm(skip, at::silu(at::bmm(c[q], st.w1)), st.w2);  // M_{chunk start}(q)
  } else {  // 3. Hq, then Y = Q + diag(A) phi(Hq) W2 + diag(Bv) phi(Hq) S2 - (Kc * phi(Hq) Ak^T) diag(theta) G
    auto hq = at::bmm(c[qa], st.w1);
    if (!st.fresh) hq = at::baddbmm(hq, c[qb], st.s1);  // a fresh memory's S1 = 0
    hq = at::baddbmm(hq, c[mq], dh, 1.0, -1.0);
    auto aq = at::silu(hq);
    y = at::baddbmm(skip, c[ar] * aq, st.w2);
    if (!st.fresh) y = at::baddbmm(y, c[bvr] * aq, st.s2);
    y = at::baddbmm(y, c[kr_theta] * at::bmm(aq, transposed(ak)), g, 1.0, -1.0);
  }
  st = memory_chunk_end(st, c, ak, g, dh);
  return y;
}

// Floats per head that memory_chunk keeps per chunk of n tokens (the operands its ops save):
//   the chunk-start W1, W2, S1, S2 [d_h, m]; a_n, bv_n, p_n;
//   [n, d_h]: K, K^T diag(Kc_n theta), K^T diag(E_n theta), (Kc_n theta) G, (E_n theta) G, G's versions;
//   [n, m]: Hk, sigmoid(Hk), Ak, 1 - sigmoid, G W2^T, the slope, Dh's versions (as G's);
//   [n]: kc_n, e_n; the normalised step's slope^2 [n, m], |W2|^2 [m], its product, |k|^2 and
//   divisor; the clip's four squared norms, their sum, its rsqrt and the factor.
//   Retrieval after/before: Q diag(A), Q diag(Bv) [n, d_h]; Hq, Aq, diag(A) Aq, diag(Bv) Aq [n, m];
//   mq, kr_theta, Aq Ak^T and its product with kr_theta [n, n]; ar, bvr. Chunk: Q; Q W1 and its SiLU.
double memory_chunk_saved(int64_t n, int64_t dh, int64_t m, const MemoryRule& rule) {
  const double N = static_cast<double>(n), D = static_cast<double>(dh), M = static_cast<double>(m);
  const double versions = gradient_versions(rule);
  double floats = 4 * D * M + 3 + N * D * (5 + versions) + N * M * (6 + versions) + 2 * N;
  if (rule.step == InnerStep::normalized) floats += N * M + M + 3 * N;
  if (rule.grad_clip > 0) floats += 7 * N;
  floats += rule.retrieval == Retrieval::chunk ? N * D + 2 * N * M : 2 * N * D + 4 * N * M + 4 * N * N + 2 * N;
  return floats;
}

}  // namespace

MemoryInputs MemoryInputs::narrow(int64_t start, int64_t length) const {
  return {q.narrow(2, start, length),     k.narrow(2, start, length),   v.narrow(2, start, length),
          theta.narrow(2, start, length), eta.narrow(2, start, length), alpha.narrow(2, start, length)};
}

MemoryInputs MemoryInputs::then(const MemoryInputs& next) const {
  return {at::cat({q, next.q}, 2),         at::cat({k, next.k}, 2),     at::cat({v, next.v}, 2),
          at::cat({theta, next.theta}, 2), at::cat({eta, next.eta}, 2), at::cat({alpha, next.alpha}, 2)};
}

at::Tensor memory_read(const at::Tensor& w1, const at::Tensor& w2, const at::Tensor& z, bool residual) {
  auto mlp = w2.size(-2) == 0 ? at::matmul(z, w1) : at::matmul(at::silu(at::matmul(z, w1)), w2);
  return residual ? z + mlp : mlp;  // M(z) = z + SiLU(z W1) W2, or SiLU(z W1) W2 (linear: z W1)
}

std::pair<at::Tensor, at::Tensor> memory_gradient(const at::Tensor& w1, const at::Tensor& w2, const at::Tensor& k,
                                                  const at::Tensor& v, bool residual) {
  auto kr = k.unsqueeze(-2);  // [B, H, 1, d_h]
  if (w2.size(-2) == 0) {      // linear: grad_W = k^T (2 / d_h)(M(k) - v)
    auto g = (2.0 / static_cast<double>(k.size(-1))) * (memory_read(w1, w2, kr, residual) - v.unsqueeze(-2));
    return {at::matmul(transposed(kr), g), at::zeros_like(w2)};
  }
  auto h = at::matmul(kr, w1);
  auto act = at::silu(h);
  auto g = (2.0 / static_cast<double>(k.size(-1))) * (memory_read(w1, w2, kr, residual) - v.unsqueeze(-2));
  auto dh = at::matmul(g, transposed(w2)) * silu_derivative(h);
  return {at::matmul(transposed(kr), dh), at::matmul(transposed(act), g)};  // (k^T dh, a^T g)
}

at::Tensor memory_jacobian_norm_squared(const at::Tensor& w1, const at::Tensor& w2, const at::Tensor& k,
                                        bool residual) {
  const int64_t d = k.size(-1);
  const auto m_of_k = memory_read(w1, w2, k.unsqueeze(-2), residual).squeeze(-2);
  auto total = at::zeros({k.size(0), k.size(1), 1, 1}, k.options());
  for (int64_t j = 0; j < d; ++j) {  // v = M(k) - (d_h / 2) e_j makes dloss/dM(k) = e_j: u = row j of J
    auto v = m_of_k.clone();
    v.select(-1, j).sub_(static_cast<double>(d) / 2.0);
    auto [u1, u2] = memory_gradient(w1, w2, k, v, residual);
    total = total + u1.pow(2).sum({-2, -1}, true) + u2.pow(2).sum({-2, -1}, true);
  }
  return total;
}

at::Tensor memory_scan(MemoryState& state, const MemoryInputs& in, const MemoryRule& rule) {
  const int64_t chunk = rule.chunk;
  const int64_t batch = in.q.size(0), heads = in.q.size(1);
  const int64_t whole = in.length() / chunk, tail = in.length() - whole * chunk;
  // Heads join the batch, and whole chunks get a dimension: [B, H, T, ...] -> [BH, chunks, n, ...].
  auto chunked = [&](const at::Tensor& x, int64_t start, int64_t chunks, int64_t n) {
    return x.flatten(0, 1).narrow(1, start, chunks * n).unflatten(1, {chunks, n});
  };
  auto plan_of = [&](int64_t start, int64_t chunks, int64_t n) {
    return chunk_plan(chunked(in.q, start, chunks, n), chunked(in.k, start, chunks, n), chunked(in.v, start, chunks, n),
                      chunked(in.theta, start, chunks, n), chunked(in.eta, start, chunks, n),
                      chunked(in.alpha, start, chunks, n), rule);
  };
  MemoryState st{state.w1.flatten(0, 1), state.w2.flatten(0, 1), state.s1.flatten(0, 1), state.s2.flatten(0, 1),
                 state.fresh};
  std::vector<at::Tensor> outputs;
  if (whole > 0) {
    const auto plan = [&] {
      TraceScope scope("chunk coefficients");
      return plan_of(0, whole, chunk);
    }();
    const auto chunks = plan.chunks();
    for (int64_t j = 0; j < whole; ++j) {
      TraceScope scope("chunk", j);
      outputs.push_back(memory_chunk(st, chunks[static_cast<size_t>(j)], rule));
    }
  }
  if (tail > 0) {
    TraceScope scope("chunk", whole);
    outputs.push_back(memory_chunk(st, plan_of(whole * chunk, 1, tail).chunks()[0], rule));
  }
  auto unflat = [&](const at::Tensor& x) { return x.unflatten(0, {batch, heads}); };
  state = {unflat(st.w1), unflat(st.w2), unflat(st.s1), unflat(st.s2)};
  return unflat(at::cat(outputs, 1));
}

double memory_scan_saved_bytes_per_token(int64_t head_dim, int64_t hidden, const MemoryRule& rule) {
  const int64_t n = rule.chunk;
  const double step = hidden > 0 ? memory_chunk_saved(n, head_dim, hidden, rule)
                                 : linear_memory_chunk_saved(n, head_dim, rule);
  return 4.0 * (chunk_plan_saved(n, head_dim, rule.retrieval) + step) / static_cast<double>(n);  // fp32
}

double memory_scan_fresh_bytes_less(int64_t head_dim, int64_t hidden, const MemoryRule& rule) {
  const double N = static_cast<double>(rule.chunk), D = static_cast<double>(head_dim), M = static_cast<double>(hidden);
  const bool reads_state = rule.retrieval != Retrieval::chunk;
  // Of memory_chunk_saved / linear_memory_chunk_saved: the chunk-start S1 and S2, bv_n and p_n;
  // retrieval after/before: Q diag(Bv) (and of an MLP memory diag(Bv) Aq and bvr).
  const double floats = hidden > 0 ? 2 * D * M + 2 + (reads_state ? N * D + N * M + N : 0.0)
                                   : D * D + 2 + (reads_state ? N * D : 0.0);
  return 4.0 * floats;  // fp32
}

std::pair<at::Tensor, at::Tensor> clip_gradient(const at::Tensor& u1, const at::Tensor& u2, double clip) {
  if (clip <= 0) return {u1, u2};
  auto norm_squared = u1.pow(2).sum({-2, -1}, true) + u2.pow(2).sum({-2, -1}, true);  // ||u||_F^2, written out
  auto scale = at::minimum(at::ones_like(norm_squared), clip / norm_squared.sqrt());
  return {u1 * scale, u2 * scale};
}

at::Tensor memory_scan_reference(MemoryState& state, const MemoryInputs& in, const MemoryRule& rule) {
  auto &w1 = state.w1, &w2 = state.w2, &s1 = state.s1, &s2 = state.s2;  // a fresh one's S are zeros too
  state.fresh = false;
  const auto [chunk, retrieval, grad_clip, residual, step] = rule;
  const double d = static_cast<double>(in.k.size(-1));
  at::Tensor ref1, ref2;
  std::vector<at::Tensor> outputs;
  auto scalar = [](const at::Tensor& x, int64_t i) { return x.select(2, i).unsqueeze(-1).unsqueeze(-1); };
  for (int64_t i = 0; i < in.length(); ++i) {
    if (i % chunk == 0) ref1 = w1, ref2 = w2;  // t' = t - mod(t, C): the chunk-start weights
    auto q = in.q.narrow(2, i, 1);
    if (retrieval == Retrieval::before) outputs.push_back(memory_read(w1, w2, q, residual));
    auto u = memory_gradient(ref1, ref2, in.k.select(2, i), in.v.select(2, i), residual);
    if (step == InnerStep::normalized) {  // u / ((2 / d_h) ||J||_F^2 / d_h)
      const auto divisor = (2.0 / d) * memory_jacobian_norm_squared(ref1, ref2, in.k.select(2, i), residual) / d;
      u = {u.first / divisor, u.second / divisor};
    }
    auto [u1, u2] = clip_gradient(u, grad_clip);
    s1 = scalar(in.eta, i) * s1 - scalar(in.theta, i) * u1;  // S_t = eta_t S_{t-1} - theta_t u_t
    s2 = scalar(in.eta, i) * s2 - scalar(in.theta, i) * u2;
    w1 = (1 - scalar(in.alpha, i)) * w1 + s1;  // M_t = (1 - alpha_t) M_{t-1} + S_t
    w2 = (1 - scalar(in.alpha, i)) * w2 + s2;
    if (retrieval == Retrieval::after) outputs.push_back(memory_read(w1, w2, q, residual));
    if (retrieval == Retrieval::chunk) outputs.push_back(memory_read(ref1, ref2, q, residual));
  }
  return at::cat(outputs, 2);
}

}  // namespace ember
