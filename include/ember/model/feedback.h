// The next-token feedback a block may read besides its input, which the language model computes
// (model/lm.h): d loss_t / d x_t, token t's next-token loss (target ids_{t+1}) differentiated at a
// residual stream x_t through the final norm and head only, without a graph. A block asks for it
// (FeedbackNeeds) when its feed-forward part learns in context (docs/mixers.md, "Hope-attention").
#pragma once
#include <ATen/Tensor.h>

#include <functional>

namespace ember {

struct Feedback {
  // [B, T, D]: at the final stream of a first pass in which no block reads feedback; 0 at the last
  // position, whose target is not in ids (in decoding: the rows of the positions before each new token).
  at::Tensor first_pass;
  // At streams [B, n, D] of this pass from `position` on, against the targets the ids hold (0 where
  // they hold none).
  std::function<at::Tensor(const at::Tensor& stream, int64_t position)> at_stream;
  bool defined() const { return first_pass.defined() || static_cast<bool>(at_stream); }
};

// What a block reads of Feedback, for the model to compute only that, and to count its FLOPs.
struct FeedbackNeeds {
  bool first_pass = false;   // Feedback::first_pass
  int64_t stream_reads = 0;  // the reads of Feedback::at_stream per token
  bool any() const { return first_pass || stream_reads > 0; }
  FeedbackNeeds& operator+=(const FeedbackNeeds& o) {
    first_pass = first_pass || o.first_pass;
    stream_reads += o.stream_reads;
    return *this;
  }
};

}  // namespace ember
