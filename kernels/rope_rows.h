// A RoPE input x [B, H, T, 2h] and its output y seen as rows (any strides over B, H, T; unit stride
// over the last dimension), shared by the CPU loops and the CUDA kernel; no ATen. y may keep x's
// layout (the heads of a projection, [B, T, H, 2h] in memory) so its gradient needs no transpose copy.
#pragma once
#include <cstdint>

namespace ember::rope {

struct Rows {
  int64_t B, H, T, half, offset;         // row r = (b H + h) T + t is position offset + t
  int64_t stride_b, stride_h, stride_t;  // of x, in elements
  int64_t out_b, out_h, out_t;           // of y, in elements
};

}  // namespace ember::rope
