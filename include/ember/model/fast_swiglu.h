// A SwiGLU MLP used as fast weights learned in context: Hope-attention's in-context chunked CMS
// level updates (Nested Learning Eq. 71, the spec's H1; docs/mixers.md, "Hope-attention"). Level l
// starts every sequence from its outer-trained weights theta_0; the tokens of chunk j = [jC, (j+1)C)
// read the weights after chunk j - 1; after the chunk's last token
//   theta <- theta - lr * sum_{t in chunk} grad_theta < delta_t, MLP_theta(u_t) >   at the chunk-start theta
// where u_t is the level's (normed) input and delta_t the teach signal, the next-token loss's
// gradient at the final residual stream, which the level's output reaches along the skip path
// (model/lm.h: from a first, static pass). Tokens and chunks are 0-indexed: the step after token
// i = (j+1)C - 1 is first read by token (j+1)C. The inner gradient is written out (no autograd
// inside the loop, 8 d F FLOPs per token); each sequence of the batch has its own weights.
#pragma once
#include <ATen/ATen.h>

#include <functional>

#include "ember/model/mixer.h"
#include "ember/model/mlp.h"

namespace ember {

at::Tensor silu_derivative(const at::Tensor& h);  // d/dh h sigmoid(h)

// The teach signal a level reads. two_pass: `rows` [B, T, D], one per position (in decoding, those
// of the positions before each new token). lens: `of_stream(stream, position)`, the next-token
// gradient of the level's own output streams [B, n, D] from `position` on (all n targets known).
struct TeachSignal {
  at::Tensor rows;
  std::function<at::Tensor(const at::Tensor& stream, int64_t position)> of_stream;
  bool defined() const { return rows.defined() || static_cast<bool>(of_stream); }
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
