// Where a tied table's two gradients meet, instead of in autograd's input buffer, which adds the
// lookup's sparse gradient into the head's dense one out of place: a copy of the V x D table per
// step (and a second V x D at the end of backward). The lookup's forward marks the handoff as
// taken; the head's backward (LossGradient::root), which runs before the lookup's (the lookup feeds
// the head's input), leaves its dense gradient here, scaled by the gradient the loss received, and
// hands none to autograd itself; the lookup's backward adds its rows into it in place and hands on
// the sum as the table's gradient (model/table_embedding.h). Autograd then adds that to any other
// gradient of the table like any other (a second training loss, a term of the table's own), so the
// handoff holds however the loss is used. Without the lookup's forward the head hands its gradient
// to autograd itself; without the head's backward the lookup hands on its rows alone.
#pragma once
#include <ATen/ATen.h>

#include <memory>

namespace ember {

struct TiedTableGradient {
  bool lookup = false;  // a lookup took this handoff in its forward and hands on what is left here
  at::Tensor head;      // dL/dW of the output head, until the lookup's backward takes it
};

}  // namespace ember
