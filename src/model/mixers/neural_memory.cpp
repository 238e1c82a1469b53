#include "ember/model/mixers/neural_memory.h"

#include "ember/model/fast_swiglu.h"  // silu_derivative, shared with the CMS levels' fast weights

namespace ember {
namespace {

at::Tensor transposed(const at::Tensor& x) { return x.transpose(-1, -2); }

// Per-token scalars as [B, H, n, 1] so they scale rows.
at::Tensor rows(const at::Tensor& x) { return x.unsqueeze(-1); }

// Inclusive cumulative product along `dim` by doubling (log2 n multiplies by a shifted copy): exact
// with zeros, unlike exp of a log-cumsum, and made of ops whose backward every device has.
at::Tensor cumulative_product(at::Tensor x, int64_t dim) {
  const int64_t n = x.size(dim);
  for (int64_t shift = 1; shift < n; shift *= 2)
    x = x * at::cat({at::ones_like(x.narrow(dim, 0, shift)), x.narrow(dim, 0, n - shift)}, dim);
  return x;
}

// X[s, i] = prod_{j = i+1 .. s} f_j for i <= s, else 0: a masked cumulative product (no logs, so
// f_j = 0 is exact). f [B, H, n] -> [B, H, n, n].
at::Tensor product_matrix(const at::Tensor& f) {
  const int64_t n = f.size(-1);
  auto index = at::arange(n, f.options().dtype(at::kLong));
  auto later = index.unsqueeze(1) > index.unsqueeze(0);       // s > i
  auto factors = at::where(later, rows(f), at::ones_like(rows(f)));  // row s: f_s right of the diagonal
  return cumulative_product(factors, -2).masked_fill(index.unsqueeze(1) < index.unsqueeze(0), 0.0);
}

// The gate products of chunks of tokens, which depend on the gates alone (docs/mixers.md, Titans
// step 2): E[s,i] = prod_{i<j<=s} eta_j, D[tau,s] = prod_{s<j<=tau} (1 - alpha_j), their product Kc
// (W_tau's weight on token i's gradient), the inclusive products p of eta and a of 1 - alpha, and
// Bv (W_tau's weight on S_0). Gates [..., n] with any leading dims: memory_scan forms them for all
// whole chunks at once, [B, H, chunks, C], out of the sequential loop.
struct ChunkCoefficients {
  at::Tensor e, p, a, kc, bv;
  ChunkCoefficients chunk(int64_t j) const { return {e.select(2, j), p.select(2, j), a.select(2, j), kc.select(2, j), bv.select(2, j)}; }
};

ChunkCoefficients chunk_coefficients(const at::Tensor& eta, const at::Tensor& alpha) {
  auto keep = 1 - alpha;
  auto e = product_matrix(eta), d = product_matrix(keep);
  auto p = cumulative_product(eta, -1);
  return {e, p, cumulative_product(keep, -1), at::matmul(d, e), at::matmul(d, rows(p)).squeeze(-1)};
}

// One chunk of n tokens from the chunk-start state (docs/mixers.md, Titans steps 1-4).
at::Tensor memory_chunk(MemoryState& st, const MemoryInputs& in, const ChunkCoefficients& c, Retrieval retrieval) {
  const auto &q = in.q, &k = in.k, &v = in.v;
  const int64_t n = in.length();
  // 1. Keys through the chunk-start weights; per-token gradients are (k^T Dh, Ak^T G), never formed.
  auto hk = at::matmul(k, st.w1);
  auto ak = at::silu(hk);
  auto g = (2.0 / static_cast<double>(k.size(-1))) * (k + at::matmul(ak, st.w2) - v);  // dloss/dM(k)
  auto dh = at::matmul(g, transposed(st.w2)) * silu_derivative(hk);          // dloss/d(k W1)
  // 2. Coefficients (chunk_coefficients).
  const auto &e = c.e, &p = c.p, &a = c.a, &kc = c.kc, &bv = c.bv;
  auto theta_dh = rows(in.theta) * dh, theta_g = rows(in.theta) * g;
  // 3. Retrieval: the weights after token tau (rows of A, Bv, Kc) or before it (the rows above).
  at::Tensor y;
  if (retrieval == Retrieval::chunk) {
    y = memory_read(st.w1, st.w2, q);
  } else {
    auto ar = a, bvr = bv, kr = kc;
    if (retrieval == Retrieval::before) {
      ar = at::cat({at::ones_like(a.narrow(-1, 0, 1)), a.narrow(-1, 0, n - 1)}, -1);
      bvr = at::cat({at::zeros_like(bv.narrow(-1, 0, 1)), bv.narrow(-1, 0, n - 1)}, -1);
      kr = at::constant_pad_nd(kc, {0, 0, 1, 0}).narrow(-2, 0, n);
    }
    auto hq = rows(ar) * at::matmul(q, st.w1) + rows(bvr) * at::matmul(q, st.s1) -
              at::matmul(kr * at::matmul(q, transposed(k)), theta_dh);
    auto aq = at::silu(hq);
    y = q + rows(ar) * at::matmul(aq, st.w2) + rows(bvr) * at::matmul(aq, st.s2) -
        at::matmul(kr * at::matmul(aq, transposed(ak)), theta_g);
  }
  // 4. End-of-chunk state from the last rows, every update reading the chunk-start values.
  auto last = [n](const at::Tensor& x) { return x.select(-1, n - 1).unsqueeze(-1).unsqueeze(-1); };
  auto kc_n = rows(kc.select(-2, n - 1)), e_n = rows(e.select(-2, n - 1));
  MemoryState next{last(a) * st.w1 + last(bv) * st.s1 - at::matmul(transposed(k), kc_n * theta_dh),
                   last(a) * st.w2 + last(bv) * st.s2 - at::matmul(transposed(ak), kc_n * theta_g),
                   last(p) * st.s1 - at::matmul(transposed(k), e_n * theta_dh),
                   last(p) * st.s2 - at::matmul(transposed(ak), e_n * theta_g)};
  st = std::move(next);
  return y;
}

}  // namespace

MemoryInputs MemoryInputs::narrow(int64_t start, int64_t length) const {
  return {q.narrow(2, start, length),     k.narrow(2, start, length),     v.narrow(2, start, length),
          theta.narrow(2, start, length), eta.narrow(2, start, length), alpha.narrow(2, start, length)};
}

MemoryInputs MemoryInputs::then(const MemoryInputs& next) const {
  return {at::cat({q, next.q}, 2),         at::cat({k, next.k}, 2),     at::cat({v, next.v}, 2),
          at::cat({theta, next.theta}, 2), at::cat({eta, next.eta}, 2), at::cat({alpha, next.alpha}, 2)};
}

at::Tensor memory_read(const at::Tensor& w1, const at::Tensor& w2, const at::Tensor& z) {
  return z + at::matmul(at::silu(at::matmul(z, w1)), w2);  // M(z) = z + SiLU(z W1) W2
}

std::pair<at::Tensor, at::Tensor> memory_gradient(const at::Tensor& w1, const at::Tensor& w2, const at::Tensor& k,
                                                  const at::Tensor& v) {
  auto kr = k.unsqueeze(-2);  // [B, H, 1, d_h]
  auto h = at::matmul(kr, w1);
  auto act = at::silu(h);
  auto g = (2.0 / static_cast<double>(k.size(-1))) * (kr + at::matmul(act, w2) - v.unsqueeze(-2));
  auto dh = at::matmul(g, transposed(w2)) * silu_derivative(h);
  return {at::matmul(transposed(kr), dh), at::matmul(transposed(act), g)};  // (k^T dh, a^T g)
}

at::Tensor memory_scan(MemoryState& state, const MemoryInputs& in, int64_t chunk, Retrieval retrieval) {
  const int64_t whole = in.length() / chunk, tail = in.length() - whole * chunk;
  auto by_chunk = [&](const at::Tensor& x) {  // [B, H, whole * C] -> [B, H, whole, C]
    return x.narrow(2, 0, whole * chunk).unflatten(2, {whole, chunk});
  };
  ChunkCoefficients all;
  if (whole > 0) all = chunk_coefficients(by_chunk(in.eta), by_chunk(in.alpha));
  std::vector<at::Tensor> outputs;
  for (int64_t j = 0; j < whole; ++j)
    outputs.push_back(memory_chunk(state, in.narrow(j * chunk, chunk), all.chunk(j), retrieval));
  if (tail > 0) {
    const auto last = in.narrow(whole * chunk, tail);
    outputs.push_back(memory_chunk(state, last, chunk_coefficients(last.eta, last.alpha), retrieval));
  }
  return at::cat(outputs, 2);
}

at::Tensor memory_scan_reference(MemoryState& state, const MemoryInputs& in, int64_t chunk, Retrieval retrieval) {
  auto& [w1, w2, s1, s2] = state;
  at::Tensor ref1, ref2;
  std::vector<at::Tensor> outputs;
  auto scalar = [](const at::Tensor& x, int64_t i) { return x.select(2, i).unsqueeze(-1).unsqueeze(-1); };
  for (int64_t i = 0; i < in.length(); ++i) {
    if (i % chunk == 0) ref1 = w1, ref2 = w2;  // t' = t - mod(t, C): the chunk-start weights
    auto q = in.q.narrow(2, i, 1);
    if (retrieval == Retrieval::before) outputs.push_back(memory_read(w1, w2, q));
    auto [u1, u2] = memory_gradient(ref1, ref2, in.k.select(2, i), in.v.select(2, i));
    s1 = scalar(in.eta, i) * s1 - scalar(in.theta, i) * u1;  // S_t = eta_t S_{t-1} - theta_t u_t
    s2 = scalar(in.eta, i) * s2 - scalar(in.theta, i) * u2;
    w1 = (1 - scalar(in.alpha, i)) * w1 + s1;  // M_t = (1 - alpha_t) M_{t-1} + S_t
    w2 = (1 - scalar(in.alpha, i)) * w2 + s2;
    if (retrieval == Retrieval::after) outputs.push_back(memory_read(w1, w2, q));
    if (retrieval == Retrieval::chunk) outputs.push_back(memory_read(ref1, ref2, q));
  }
  return at::cat(outputs, 2);
}

}  // namespace ember
