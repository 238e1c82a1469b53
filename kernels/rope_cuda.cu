// CUDA rotary embedding: one fused pass per direction in place of the ATen form's casts, slices,
// products and concatenation. One thread per (row, pair i) reads x_a, x_b and the position's
// cos / sin, and writes both halves of y (the same math as kernels/rope_cpu_loops.cpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kernels/rope_launch.h"

namespace ember::rope {
namespace {

__device__ __forceinline__ float widen(float v) { return v; }
__device__ __forceinline__ double widen(double v) { return v; }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__device__ __forceinline__ void narrow_to(float v, float* out) { *out = v; }
__device__ __forceinline__ void narrow_to(double v, double* out) { *out = v; }
__device__ __forceinline__ void narrow_to(float v, __nv_bfloat16* out) { *out = __float2bfloat16(v); }
__device__ __forceinline__ void narrow_to(float v, __half* out) { *out = __float2half(v); }

// y_a = x_a cos - x_b sin, y_b = x_b cos + x_a sin (sin negated for the inverse), in precision M.
template <class T, class M>
__global__ void rope_kernel(const T* x, T* y, const M* cos, const M* sin, Rows s, bool inverse) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= s.B * s.H * s.T * s.half) return;
  const int64_t i = idx % s.half, r = idx / s.half;
  const int64_t t = r % s.T, h = r / s.T % s.H, b = r / (s.T * s.H);
  const T* xa = x + b * s.stride_b + h * s.stride_h + t * s.stride_t;
  const M a = widen(xa[i]), bb = widen(xa[i + s.half]);
  const M c = cos[(s.offset + t) * s.half + i],
          sn = inverse ? -sin[(s.offset + t) * s.half + i] : sin[(s.offset + t) * s.half + i];
  T* ya = y + b * s.out_b + h * s.out_h + t * s.out_t;
  narrow_to(a * c - bb * sn, ya + i);
  narrow_to(bb * c + a * sn, ya + i + s.half);
}

template <class T, class M>
int launch(const void* x, void* y, const void* cos, const void* sin, const Rows& s, bool inverse, void* stream) {
  const int64_t n = s.B * s.H * s.T * s.half;
  if (n == 0) return 0;
  const int threads = 256;
  rope_kernel<T, M>
      <<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, static_cast<cudaStream_t>(stream)>>>(
          static_cast<const T*>(x), static_cast<T*>(y), static_cast<const M*>(cos), static_cast<const M*>(sin), s,
          inverse);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int probe_rope_kernel() {
  cudaFuncAttributes attributes;
  const cudaError_t status = cudaFuncGetAttributes(&attributes, rope_kernel<float, float>);
  if (status != cudaSuccess) cudaGetLastError();  // not sticky: clear it for the next call
  return static_cast<int>(status);
}

int launch_rope(const void* x, void* y, const void* cos, const void* sin, Element element, const Rows& rows,
                bool inverse, void* stream) {
  switch (element) {
    case Element::f64: return launch<double, double>(x, y, cos, sin, rows, inverse, stream);
    case Element::bf16: return launch<__nv_bfloat16, float>(x, y, cos, sin, rows, inverse, stream);
    case Element::f16: return launch<__half, float>(x, y, cos, sin, rows, inverse, stream);
    case Element::f32: break;
  }
  return launch<float, float>(x, y, cos, sin, rows, inverse, stream);
}

}  // namespace ember::rope
