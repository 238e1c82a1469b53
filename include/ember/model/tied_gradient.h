// Where a tied table's two gradients meet, instead of in autograd's input buffer, which adds the
// lookup's sparse gradient into the head's dense one out of place: a copy of the V x D table per
// step (and a second V x D at the end of backward). The head's gradient, formed in its forward
// (LossGradient::root) and handed to autograd, is also left here; the lookup's backward, which runs
// before the table's gradient is accumulated (that waits for both), adds its rows into it in place
// and hands on no gradient of its own (model/table_embedding.h). Without the lookup's backward the
// head's gradient reaches the table as it is.
#pragma once
#include <ATen/ATen.h>

namespace ember {

struct TiedTableGradient {
  at::Tensor head;  // dL/dW of the output head, until the lookup's backward takes it
};

}  // namespace ember
