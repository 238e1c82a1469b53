// CUDA RMSNorm with its residual add: one pass forward (h = x + m, y) and one backward (dx, dm and a
// row of partial dg per block) in place of ATen's add, norm, casts and their backward, at any width.
// The math of kernels/rms_norm_math.h; bf16 through its Bf16 storage, as the CPU loops.
#include <cuda_runtime.h>

#include "kernels/rms_norm_launch.h"

namespace ember::rms_norm {
namespace {

constexpr int kThreads = 256;  // a multiple of the warp size
constexpr int64_t kMaxBlocks = 1024;

// The sum of v over the block, returned to every thread (shared: 32 values of scratch).
template <class S>
__device__ S block_sum(S v, S* shared) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // shared may still be read from the previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  S total = 0;
  for (int w = 0; w < blockDim.x / 32; ++w) total += shared[w];
  return total;
}

template <class S, class M, class Y>
__global__ void forward_kernel(const S* x, const M* m, const S* g, S* h, Y* y, S* r, Shape shape) {
  __shared__ S scratch[32];
  const int64_t row = blockIdx.x, D = shape.D;
  const S* xr = x + row * D;
  if (m) {
    S* hr = h + row * D;
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) hr[i] = xr[i] + widen(m[row * D + i]);
    xr = hr;  // each thread reads back only what it wrote
  }
  S squares = 0;
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) squares += xr[i] * xr[i];
  const S rr = inverse_rms(block_sum(squares, scratch), D, shape.eps);
  if (threadIdx.x == 0) r[row] = rr;
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) store(normed(xr[i], rr, g[i]), y + row * D + i);
}

// Block b takes rows b, b + gridDim.x, ...; its threads own the columns i = threadIdx.x + k blockDim.x
// and sum dg for them into row b of partial_dg: in shared memory first when the row fits there
// (in_shared), else in place (no other thread touches those columns).
template <class S, class M, class Y>
__global__ void backward_kernel(const S* dh, const Y* dy, const S* h, const S* g, const S* r, S* dx, M* dm,
                                S* partial_dg, Shape shape, bool in_shared) {
  extern __shared__ __align__(16) unsigned char dynamic[];
  __shared__ S scratch[32];
  const int64_t D = shape.D;
  S* const out = partial_dg + blockIdx.x * D;
  S* const dg = in_shared ? reinterpret_cast<S*>(dynamic) : out;
  for (int64_t i = threadIdx.x; i < D; i += blockDim.x) dg[i] = 0;
  for (int64_t row = blockIdx.x; row < shape.rows; row += gridDim.x) {
    const Y* dyr = dy + row * D;
    const S* hr = h + row * D;
    const S rr = r[row];
    S dot = 0;
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) dot += hr[i] * g[i] * S(widen(dyr[i]));
    const S k = back_coefficient(rr, block_sum(dot, scratch), D);
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) {
      const S dyi = widen(dyr[i]);
      const S d = stream_grad(dh ? dh[row * D + i] : S(0), dyi, hr[i], rr, g[i], k);
      dx[row * D + i] = d;
      if (dm) store(d, dm + row * D + i);
      dg[i] += dyi * hr[i] * rr;
    }
  }
  if (in_shared)
    for (int64_t i = threadIdx.x; i < D; i += blockDim.x) out[i] = dg[i];
}

template <class S, class M, class Y>
int forward(const void* x, const void* m, const void* g, void* h, void* y, void* r, const Shape& s, void* stream) {
  if (s.rows == 0) return 0;
  forward_kernel<S, M, Y><<<static_cast<unsigned>(s.rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const S*>(x), static_cast<const M*>(m), static_cast<const S*>(g), static_cast<S*>(h),
      static_cast<Y*>(y), static_cast<S*>(r), s);
  return static_cast<int>(cudaGetLastError());
}

template <class S, class M, class Y>
int backward(const void* dh, const void* dy, const void* h, const void* g, const void* r, void* dx, void* dm,
             void* partial, const Shape& s, void* stream) {
  const auto blocks = static_cast<unsigned>(backward_blocks(s.rows));
  if (blocks == 0) return 0;
  const bool in_shared = s.D <= max_shared_width(sizeof(S));
  const size_t shared_bytes = in_shared ? s.D * sizeof(S) : 0;
  backward_kernel<S, M, Y><<<blocks, kThreads, shared_bytes, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const S*>(dh), static_cast<const Y*>(dy), static_cast<const S*>(h), static_cast<const S*>(g),
      static_cast<const S*>(r), static_cast<S*>(dx), static_cast<M*>(dm), static_cast<S*>(partial), s, in_shared);
  return static_cast<int>(cudaGetLastError());
}

// The storage combinations of kernels/rms_norm_cpu_loops.h (the glue refuses any other).
enum class Combination { f32, f32_m16, f32_y16, f32_both16, f64, none };

Combination combination(Types t) {
  if (t.stream == Element::f16 || t.m == Element::f16 || t.y == Element::f16) return Combination::none;  // no f16 kernel
  if (t.stream == Element::f64) return Combination::f64;
  const bool m16 = t.m == Element::bf16, y16 = t.y == Element::bf16;
  return m16 && y16 ? Combination::f32_both16 : m16 ? Combination::f32_m16 : y16 ? Combination::f32_y16 : Combination::f32;
}

}  // namespace

int64_t backward_blocks(int64_t rows) { return rows < kMaxBlocks ? rows : kMaxBlocks; }

int probe_kernel() {
  cudaFuncAttributes attributes;
  const cudaError_t status = cudaFuncGetAttributes(&attributes, forward_kernel<float, float, float>);
  if (status != cudaSuccess) cudaGetLastError();  // not sticky: clear it for the next call
  return static_cast<int>(status);
}

int launch_forward(const void* x, const void* m, const void* g, void* h, void* y, void* r, Types types,
                   const Shape& shape, void* stream) {
  switch (combination(types)) {
    case Combination::f64: return forward<double, double, double>(x, m, g, h, y, r, shape, stream);
    case Combination::f32_m16: return forward<float, Bf16, float>(x, m, g, h, y, r, shape, stream);
    case Combination::f32_y16: return forward<float, float, Bf16>(x, m, g, h, y, r, shape, stream);
    case Combination::f32_both16: return forward<float, Bf16, Bf16>(x, m, g, h, y, r, shape, stream);
    case Combination::none: return static_cast<int>(cudaErrorInvalidValue);
    case Combination::f32: break;
  }
  return forward<float, float, float>(x, m, g, h, y, r, shape, stream);
}

int launch_backward(const void* dh, const void* dy, const void* h, const void* g, const void* r, void* dx, void* dm,
                    void* partial_dg, Types types, const Shape& shape, void* stream) {
  switch (combination(types)) {
    case Combination::f64: return backward<double, double, double>(dh, dy, h, g, r, dx, dm, partial_dg, shape, stream);
    case Combination::f32_m16: return backward<float, Bf16, float>(dh, dy, h, g, r, dx, dm, partial_dg, shape, stream);
    case Combination::f32_y16: return backward<float, float, Bf16>(dh, dy, h, g, r, dx, dm, partial_dg, shape, stream);
    case Combination::f32_both16:
      return backward<float, Bf16, Bf16>(dh, dy, h, g, r, dx, dm, partial_dg, shape, stream);
    case Combination::none: return static_cast<int>(cudaErrorInvalidValue);
    case Combination::f32: break;
  }
  return backward<float, float, float>(dh, dy, h, g, r, dx, dm, partial_dg, shape, stream);
}

}  // namespace ember::rms_norm
