// Mixer kind `short_conv`: a causal depthwise convolution over the last `kernel` tokens between two
// projections, with no attention at all (docs/mixers.md):
//   u = x W_in,   c_t = sum_{j=0}^{k-1} w_j (.) u_{t-k+1+j}  (u_s = 0 for s < 0),   y = SiLU(c) W_out
// The ablations' "local mixing only" control, and the short convolution Titans puts on q, k and v.
// It is also the worked example of docs/extending.md: one file pair and one registry row.
#pragma once
#include "ember/model/mixer.h"

namespace ember {

// model.mixer.short_conv.*
struct ShortConvConfig {
  static constexpr const char* kKind = "short_conv";
  int64_t kernel = 4;  // k: tokens each output sees, itself included

  void fields(FieldVisitor& v) { v.field("kernel", kernel, Bound::positive()); }
};

class ShortConv : public Mixer {
 public:
  ShortConv(const MixerContext& ctx, const ShortConvConfig& cfg);
  at::Tensor forward(const at::Tensor& x, const Rope& rope) override;
  // Keeps the last k - 1 rows of u between calls.
  at::Tensor decode(const at::Tensor& x, const Rope& rope, std::unique_ptr<MixerState>& state) override;
  // The convolution's 2 d k FLOPs per token are those of its [d, k] weight, counted with the
  // parameters; nothing else grows with the sequence.
  int64_t extra_flops_per_token(int64_t seq_len) const override { return 0; }
  // The input as W_in keeps it, u (padded: k - 1 rows more per sequence, not counted), the
  // convolution's output (SiLU's input) and SiLU's output (W_out's input).
  double activation_bytes_per_token(int64_t elem) const override;
  // w [d, k]: column j weighs the token k-1-j steps back (the last column, the current token).
  const at::Tensor& taps() const { return taps_; }

 private:
  at::Tensor w_in_, taps_, w_out_;
};

// The causal depthwise convolution alone: u [B, T, d], taps [d, k] -> c [B, T, d]; `before`
// [B, k - 1, d] holds the rows preceding u (zeros when undefined: the start of the sequence).
at::Tensor causal_depthwise_conv(const at::Tensor& u, const at::Tensor& taps, const at::Tensor& before = {});

}  // namespace ember
