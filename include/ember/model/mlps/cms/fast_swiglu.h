// A SwiGLU MLP used as fast weights learned in context: the cms feed-forward's in-context chunked
// level updates (Nested Learning Eq. 71, the spec's H1; docs/mixers.md, "Hope-attention"). Level l
// starts every sequence from its outer-trained weights theta_0; the tokens of chunk j = [jC, (j+1)C)
// read the weights after chunk j - 1; after the chunk's last token
//   theta <- theta - lr * sum_{t in chunk} grad_theta < delta_t, MLP_theta(u_t) >   at the chunk-start theta
// where u_t is the level's (normed) input and delta_t the teach signal, the next-token loss's
// gradient at the final residual stream, which the level's output reaches along the skip path
// (model/teach_signal.h: from a first, static pass, or at the level's own output). Tokens and
// chunks are 0-indexed: the step after token i = (j+1)C - 1 is first read by token (j+1)C. The
// inner gradient is written out (no autograd inside the loop, 8 d F FLOPs per token); each sequence
// of the batch has its own weights.
#pragma once
#include <ATen/ATen.h>

#include <functional>

#include "ember/model/teach_signal.h"
#include "ember/model/mlp.h"
#include "ember/config/enum_names.h"

namespace ember {

// Where a level's teach signal comes from (docs/mixers.md "Hope-attention"): the next-token
// gradient at the final stream of a first, static pass (two_pass: TeachSignal::first_pass), or at the
// level's own output stream read through the final norm and head, in the same pass (lens:
// TeachSignal::at_stream). In decoding, first_pass holds the rows of the positions before each new token.
enum class TeachSource { two_pass, lens };
inline std::span<const EnumName<TeachSource>> enum_names(TeachSource) {
  static constexpr EnumName<TeachSource> names[] = {{TeachSource::two_pass, "two_pass"}, {TeachSource::lens, "lens"}};
  return names;
}

// How one level learns in context: after every `chunk` tokens (0: never, a static level) a step of
// `lr` on the teach signal, which the outer gradient flows through when `differentiate`.
struct LevelUpdate {
  int64_t chunk = 0;
  double lr = 0.0;
  bool differentiate = false;
  TeachSource signal = TeachSource::two_pass;
  double grad_clip = 0.0;  // each token's inner gradient to norm <= grad_clip (0: unclipped)
  bool learns() const { return chunk > 0; }
};

// Weights per sequence: gate, up [B, F, d], down [B, d, F] (SwiGLU's layout with a batch in front).
struct SwiGLUWeights {
  at::Tensor gate, up, down;
  static SwiGLUWeights of(const SwiGLU& mlp, int64_t batch);        // the outer weights, expanded
  SwiGLUWeights minus(const SwiGLUWeights& grad, double lr) const;  // theta - lr grad
};

// A read of u [B, n, d]: the gate and up pre-activations a, b [B, n, F] and y = (SiLU(a) b) W_down^T.
struct SwiGLURead {
  at::Tensor a, b, y;
};
SwiGLURead swiglu_read(const SwiGLUWeights& w, const at::Tensor& u);
at::Tensor swiglu_apply(const SwiGLUWeights& w, const at::Tensor& u);  // swiglu_read(w, u).y
// sum_t grad_theta < teach_t, MLP_theta(u_t) > for u, teach [B, n, d]: per sequence, never per token
// (`read`: the reads of u at w, reused). clip > 0 scales each token's gradient to Frobenius norm
// <= clip first (docs/mixers.md, "A bounded inner step"); 0 leaves it.
SwiGLUWeights swiglu_inner_grad(const SwiGLUWeights& w, const at::Tensor& u, const at::Tensor& teach,
                                double clip = 0.0);
SwiGLUWeights swiglu_inner_grad(const SwiGLUWeights& w, const at::Tensor& u, const at::Tensor& teach,
                                const SwiGLURead& read, double clip = 0.0);

// One level over a whole sequence, chunk by chunk (T need not be a multiple of the chunk): u the
// level's normed input, x the stream it adds to (lens reads x + MLP(u)). With `differentiate` the
// outer gradient flows through the updates (meta-learning); without, the updates are constants to
// it (stop-grad) and the outer weights get the gradient of every chunk's read.
at::Tensor fast_swiglu_forward(const SwiGLU& mlp, const at::Tensor& u, const at::Tensor& x, const TeachSignal& teach,
                               const LevelUpdate& rule);

// The same from given per-sequence weights `w` with the teach rows given for every token (two_pass's
// signal, [B, T, d]): the level as a function of its weights, for bindings (python/csrc).
at::Tensor fast_swiglu_two_pass(const SwiGLUWeights& w, const at::Tensor& u, const at::Tensor& teach,
                                const LevelUpdate& rule);

// Decoding: the current chunk's weights, its inputs so far and the teach signals known so far (the
// signal of token t needs token t + 1, so it arrives one call step behind its input).
struct FastSwiGLUState {
  SwiGLUWeights weights;
  at::Tensor inputs, teach;  // [B, n, d]: the current chunk's, undefined when empty
  at::Tensor pending;        // lens: the output stream of the last token, whose target comes next
  int64_t position = 0;
};

// The outputs for inputs u [B, T', d] (streams x) at positions state.position.. . two_pass: the teach
// rows of the positions before each new token that the state lacks ([B, T' or T' - 1 at the start,
// d]); lens: of_stream knows this call's targets, so the output streams of all new tokens but the
// last get their signals now, and the last one's (`pending`) the next call.
at::Tensor fast_swiglu_decode(const SwiGLU& mlp, const at::Tensor& u, const at::Tensor& x, const TeachSignal& teach,
                              const LevelUpdate& rule, FastSwiGLUState& state);

}  // namespace ember
