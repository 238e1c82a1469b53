// A mixer that writes a memory while it reads the sequence (Titans), as seen from outside it: what
// `ember analyze memory` profiles (eval/memory_diagnostics.h) without naming the kind. A mixer
// offers it through Mixer::memory().
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace ember {

struct MemoryChunk {
  int64_t end = 0;                      // tokens of the sequence seen by the end of the chunk
  double w1_ratio = 0.0, w2_ratio = 0.0;  // ||W_t||_F / ||W_0||_F, mean over sequences and heads
  double contribution = 0.0;            // mean ||M_t(q) - q|| / ||q|| over the chunk's queries
  double theta = 0.0, eta = 0.0, alpha = 0.0;  // mean gates over the chunk
};

class MixerMemory {
 public:
  virtual ~MixerMemory() = default;
  // The memory along x [B, T, d] (the mixer's normalised input), chunk by chunk as the forward
  // pass runs it; each chunk's figures are means over the sequences and heads.
  virtual std::vector<MemoryChunk> memory_profile(const at::Tensor& x) const = 0;
  // The forget gate's bias per head.
  virtual std::vector<double> forget_gate_bias() const = 0;
};

}  // namespace ember
