// The next-token teach signal a feed-forward chain that learns in context reads besides its input
// (model/mlps/cms/: Hope-attention's CMS levels; docs/mixers.md, "Hope-attention"):
// d loss_t / d x_t, token t's next-token loss (target ids_{t+1}) differentiated at a residual
// stream x_t through the final norm and head only, without a graph. The model computes it for each
// pass (model/chain_context.h), only as far as the chains ask (TeachNeeds).
#pragma once
#include <ATen/Tensor.h>

#include <functional>

namespace ember {

struct TeachSignal {
  // [B, T, D]: at the final stream of a first, static pass (no chain learns in it); 0 at the last
  // position, whose target is not in ids (in decoding: the rows of the positions before each new token).
  at::Tensor first_pass;
  // At streams [B, n, D] of this pass from `position` on, against the targets the ids hold (0 where
  // they hold none).
  std::function<at::Tensor(const at::Tensor& stream, int64_t position)> at_stream;
  bool defined() const { return first_pass.defined() || static_cast<bool>(at_stream); }
};

// What a chain reads of the TeachSignal, for the model to compute only that, and to count its FLOPs.
struct TeachNeeds {
  bool first_pass = false;   // TeachSignal::first_pass
  int64_t stream_reads = 0;  // the reads of TeachSignal::at_stream per token
  bool any() const { return first_pass || stream_reads > 0; }
  TeachNeeds& operator+=(const TeachNeeds& o) {
    first_pass = first_pass || o.first_pass;
    stream_reads += o.stream_reads;
    return *this;
  }
};

}  // namespace ember
