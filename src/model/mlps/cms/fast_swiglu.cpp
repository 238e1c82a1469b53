#include "ember/model/mlps/cms/fast_swiglu.h"

#include <vector>

#include <c10/util/Exception.h>

#include "ember/model/inner_clip.h"

namespace ember {
namespace {

at::Tensor transposed(const at::Tensor& x) { return x.transpose(-1, -2); }

// Each row's squared norm: [B, n, k] -> [B, n, 1].
at::Tensor sq(const at::Tensor& x) { return x.pow(2).sum(-1, true); }

at::Tensor join(const at::Tensor& a, const at::Tensor& b) { return a.defined() ? at::cat({a, b}, 1) : b; }

// The rows from `start` on (undefined when none are left).
at::Tensor rows_from(const at::Tensor& x, int64_t start) {
  return start >= x.size(1) ? at::Tensor() : x.narrow(1, start, x.size(1) - start);
}

}  // namespace

SwiGLUWeights SwiGLUWeights::of(const SwiGLU& mlp, int64_t batch) {
  auto expand = [batch](const at::Tensor& w) { return w.unsqueeze(0).expand({batch, w.size(0), w.size(1)}); };
  return {expand(mlp.w_gate()), expand(mlp.w_up()), expand(mlp.w_down())};
}

SwiGLUWeights SwiGLUWeights::minus(const SwiGLUWeights& grad, double lr) const {
  return {gate - lr * grad.gate, up - lr * grad.up, down - lr * grad.down};
}

SwiGLURead swiglu_read(const SwiGLUWeights& w, const at::Tensor& u) {
  auto a = at::bmm(u, transposed(w.gate)), b = at::bmm(u, transposed(w.up));  // [B, n, F]
  return {a, b, at::bmm(at::silu(a) * b, transposed(w.down))};
}

at::Tensor swiglu_apply(const SwiGLUWeights& w, const at::Tensor& u) { return swiglu_read(w, u).y; }

SwiGLUWeights swiglu_inner_grad(const SwiGLUWeights& w, const at::Tensor& u, const at::Tensor& teach,
                                const SwiGLURead& read, double clip) {
  auto s = at::silu(read.a), z = s * read.b;
  auto delta = teach;
  auto dz = at::bmm(delta, w.down);  // d<teach, z W_down^T>/dz
  auto da = dz * read.b * silu_derivative(read.a), db = dz * s;
  if (clip > 0) {  // each token's gradient (da u^T, db u^T, delta z^T) to norm <= clip: all linear in delta
    const auto scale = inner_clip_factor(sq(delta) * sq(z) + (sq(da) + sq(db)) * sq(u), clip);
    delta = delta * scale, da = da * scale, db = db * scale;
  }
  return {at::bmm(transposed(da), u), at::bmm(transposed(db), u), at::bmm(transposed(delta), z)};
}

SwiGLUWeights swiglu_inner_grad(const SwiGLUWeights& w, const at::Tensor& u, const at::Tensor& teach, double clip) {
  return swiglu_inner_grad(w, u, teach, swiglu_read(w, u), clip);
}

namespace {

// theta - lr * sum_t grad <teach_t, MLP(u_t)> over one chunk (`read`: the chunk's reads at theta);
// a constant to the outer gradient unless the rule differentiates through it.
SwiGLUWeights stepped(const SwiGLUWeights& w, const at::Tensor& u, const at::Tensor& teach, const SwiGLURead& read,
                      const LevelUpdate& rule) {
  if (rule.differentiate) return w.minus(swiglu_inner_grad(w, u, teach, read, rule.grad_clip), rule.lr);
  SwiGLUWeights step;
  {
    at::NoGradGuard constant;
    step = swiglu_inner_grad(w, u, teach, read, rule.grad_clip);
  }
  return w.minus(step, rule.lr);
}

// Chunk by chunk from weights w; signal(start, n, y) gives the teach rows of the chunk read as y.
template <class Signal>
at::Tensor chunked_levels(SwiGLUWeights w, const at::Tensor& u, const LevelUpdate& rule, const Signal& signal) {
  const int64_t length = u.size(1), chunk = rule.chunk;
  std::vector<at::Tensor> out;
  for (int64_t start = 0; start < length; start += chunk) {
    const int64_t n = std::min(chunk, length - start);
    auto uc = u.narrow(1, start, n);
    const auto read = swiglu_read(w, uc);
    out.push_back(read.y);
    if (start + n == length) break;                              // the last chunk's update is read by no token
    w = stepped(w, uc, signal(start, n, read.y), read, rule);  // at the chunk-start weights
  }
  return at::cat(out, 1);
}

}  // namespace

at::Tensor fast_swiglu_forward(const SwiGLU& mlp, const at::Tensor& u, const at::Tensor& x, const TeachSignal& teach,
                               const LevelUpdate& rule) {
  if (!rule.learns() || !teach.defined()) return mlp.forward(u);
  const bool lens = rule.signal == TeachSource::lens;
  TORCH_CHECK(lens ? static_cast<bool>(teach.at_stream) : teach.first_pass.sizes() == u.sizes(),
              "fast_swiglu_forward: no teach signal of the level's kind, or of the input's shape");
  return chunked_levels(SwiGLUWeights::of(mlp, u.size(0)), u, rule, [&](int64_t start, int64_t n, const at::Tensor& y) {
    return lens ? teach.at_stream((x.narrow(1, start, n) + y).detach(), start) : teach.first_pass.narrow(1, start, n);
  });
}

at::Tensor fast_swiglu_two_pass(const SwiGLUWeights& w, const at::Tensor& u, const at::Tensor& teach,
                                const LevelUpdate& rule) {
  TORCH_CHECK(teach.sizes() == u.sizes(), "fast_swiglu_two_pass: teach ", teach.sizes(), " and input ", u.sizes(),
              " differ in shape");
  if (!rule.learns()) return swiglu_apply(w, u);
  return chunked_levels(w, u, rule, [&](int64_t start, int64_t n, const at::Tensor&) { return teach.narrow(1, start, n); });
}

at::Tensor fast_swiglu_decode(const SwiGLU& mlp, const at::Tensor& u, const at::Tensor& x, const TeachSignal& teach,
                              const LevelUpdate& rule, FastSwiGLUState& st) {
  if (!rule.learns()) return mlp.forward(u);
  const bool lens = rule.signal == TeachSource::lens;
  if (!st.weights.gate.defined()) st.weights = SwiGLUWeights::of(mlp, u.size(0));
  if (lens && st.pending.defined()) st.teach = join(st.teach, teach.at_stream(st.pending, st.position - 1));
  st.pending = at::Tensor();
  if (!lens && teach.first_pass.defined() && teach.first_pass.size(1) > 0) st.teach = join(st.teach, teach.first_pass);
  std::vector<at::Tensor> out;
  for (int64_t i = 0; i < u.size(1);) {
    const int64_t position = st.position + i, chunk = rule.chunk;
    if (position > 0 && position % chunk == 0 && st.inputs.defined()) {  // chunk [position - C, position) is done
      TORCH_CHECK(st.teach.defined() && st.teach.size(1) >= chunk, "fast_swiglu_decode: a teach signal is missing");
      const auto teach_rows = st.teach.narrow(1, 0, chunk);
      st.weights = st.weights.minus(swiglu_inner_grad(st.weights, st.inputs, teach_rows, rule.grad_clip), rule.lr);
      st.teach = rows_from(st.teach, chunk);
      st.inputs = at::Tensor();
    }
    const int64_t n = std::min(chunk - position % chunk, u.size(1) - i);
    auto seg = u.narrow(1, i, n);
    auto y = swiglu_apply(st.weights, seg);
    out.push_back(y);
    st.inputs = join(st.inputs, seg);
    if (lens) {  // the signals of the new streams whose targets this call holds; the last waits
      auto stream = x.narrow(1, i, n) + y;
      const int64_t known = i + n == u.size(1) ? n - 1 : n;
      if (known > 0) st.teach = join(st.teach, teach.at_stream(stream.narrow(1, 0, known), position));
      if (known < n) st.pending = stream.narrow(1, known, 1);
    }
    i += n;
  }
  st.position += u.size(1);
  return at::cat(out, 1);
}

}  // namespace ember
