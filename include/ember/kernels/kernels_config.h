// kernels.* keys: which path each fused op takes (ember/kernels/kernel_choice.h), and how many training
// batches are read ahead. Not part of the model: left out of the model hash, so a run may resume
// with other choices (it says which differ).
//   auto   ember's kernel where the on-device check finds it agrees with ATen and is not slower
//          (model/kernel_check.h; cached per device, torch and ember build, and precision)
//   fused  ember's kernel wherever it takes the input
//   aten   ATen's ops
#pragma once
#include <cstdint>

#include "ember/config/fields.h"
#include "ember/kernels/kernel_choice.h"

namespace ember {

struct KernelsConfig {
  kernels::Choices choices;     // one per op, all auto
  int64_t prefetch_batches = 2;  // batches read ahead on a thread (pinned on CUDA); 0: read when the step asks

  void fields(FieldVisitor& v) {
    for (kernels::Op op : kernels::kAllOps) v.choice(kernels::op_name(op), choices[op]);
    v.field("prefetch_batches", prefetch_batches, Bound{0, 1024, false, "in [0, 1024]"});
  }
  bool any_automatic() const {
    for (kernels::Op op : kernels::kAllOps)
      if (choices[op] == kernels::Path::automatic) return true;
    return false;
  }
};

}  // namespace ember
