// train.* keys: the loop itself.
#pragma once
#include <cstdint>
#include <string>

#include "ember/config/fields.h"

namespace ember {

struct TrainConfig {
  int64_t steps = 200;
  int64_t micro_batch = 16;
  int64_t seq_len = 128;
  int64_t grad_accum = 1;
  int64_t seed = 1234;
  std::string precision = "fp32";     // fp32 | bf16 (autocast; master weights stay fp32)
  std::string on_nonfinite = "stop";  // stop | skip (skip the optimizer step, count it)
  int64_t threads = 0;                // intra-op threads; 0 = LibTorch default
  std::string device = "auto";        // auto (cuda when available) | cpu | cuda

  template <class V>
  void fields(V& v) {
    v.field("steps", steps, Bound::positive());
    v.field("micro_batch", micro_batch, Bound::positive());
    v.field("seq_len", seq_len, Bound::positive());
    v.field("grad_accum", grad_accum, Bound::positive());
    v.field("seed", seed, Bound::non_negative());
    v.choice("precision", precision, {"fp32", "bf16"});
    v.choice("on_nonfinite", on_nonfinite, {"stop", "skip"});
    v.field("threads", threads, Bound::non_negative());
    v.choice("device", device, {"auto", "cpu", "cuda"});
  }
  int64_t tokens_per_step() const { return micro_batch * seq_len * grad_accum; }
};

}  // namespace ember
