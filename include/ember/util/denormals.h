// Denormal floats (|x| < 1.2e-38 in fp32) cost x86 cores a microcode assist per operation, tens of
// times a normal multiply. A memory that decays towards zero (Titans' forgetting over a long
// context, AdamW moments of idle rows) can fill whole matmuls with them. LibTorch's
// setFlushDenormal sets flush-to-zero / denormals-are-zero on the calling thread only; this sets
// it on every intra-op worker too (call it after at::set_num_threads, which may start new ones).
#pragma once

namespace ember {

// on = false restores IEEE denormals. False: the CPU does not support it (nothing changed).
bool flush_denormals_on_all_threads(bool on = true);

}  // namespace ember
