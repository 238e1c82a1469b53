// Rotary position embedding, rotate-half convention (docs/mixers.md, attention):
// omega_i = base^(-2i/d_h), RoPE(x, p) = [x_a cos - x_b sin, x_b cos + x_a sin]; with
// model.mixer.rope_scaling.type llama3 the omegas are rescaled as Llama 3.1 does.
// Tables are made on the input's device on first use (so a model moved to a GPU needs nothing
// moved by hand); the rotation runs in fp32 for fp32 and lower-precision inputs, as Python does,
// and in fp64 for fp64 inputs. The result has that dtype, except with ember's CUDA kernel, whose
// result keeps the input's dtype (a bf16 input's rotation is rounded to bf16 once, as autocast
// does before attention, without the fp32 copies).
#pragma once
#include <ATen/ATen.h>

#include <map>
#include <string>
#include <utility>

#include "ember/model/model_config.h"

namespace ember {

// The d_h/2 angular frequencies omega_i, fp64, after scaling.
at::Tensor rope_frequencies(int64_t head_dim, double base, const RopeScalingConfig& scaling = {});

class Rope {
 public:
  Rope(int64_t head_dim, int64_t max_seq_len, double base, const RopeScalingConfig& scaling = {});
  // x [B, H, T, d_h], positions offset..offset+T-1. The result, and x's gradient, keep x's memory
  // layout where it is dense (a projection's heads: [B, T, H, d_h]), else are contiguous.
  at::Tensor apply(const at::Tensor& x, int64_t offset = 0) const;
  int64_t max_seq_len() const { return cos_.size(0); }

 private:
  const std::pair<at::Tensor, at::Tensor>& tables(const at::Device& device, at::ScalarType dtype) const;
  at::Tensor cos_, sin_;  // [max_seq_len, d_h/2], fp64 masters on the CPU
  mutable std::map<std::pair<std::string, at::ScalarType>, std::pair<at::Tensor, at::Tensor>> cache_;
};

}  // namespace ember
