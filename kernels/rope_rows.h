// A RoPE input x [B, H, T, 2h] seen as rows (any strides over B, H, T; unit stride over the last
// dimension), shared by the CPU loops and the CUDA kernel; no ATen.
#pragma once
#include <cstdint>

namespace ember::rope {

struct Rows {
  int64_t B, H, T, half, offset;         // row r = (b H + h) T + t is position offset + t
  int64_t stride_b, stride_h, stride_t;  // of x, in elements
};

}  // namespace ember::rope
