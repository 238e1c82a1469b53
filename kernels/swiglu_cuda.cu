// CUDA SwiGLU gate: one pass forward (z = SiLU(a) b) and one backward (da, db) in place of ATen's
// silu, mul and their backward; one thread per element, the math of kernels/swiglu_math.h (bf16
// through its Bf16 storage, as the CPU loops).
#include <cuda_runtime.h>

#include "kernels/swiglu_launch.h"

namespace ember::swiglu {
namespace {

template <class T>
__global__ void forward_kernel(const T* a, const T* b, T* z, Rows s) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= s.n * s.width) return;
  const int64_t r = idx / s.width, i = idx % s.width;
  store(gate(widen(a[r * s.a + i]), widen(b[r * s.b + i])), z + r * s.z + i);
}

template <class T>
__global__ void backward_kernel(const T* a, const T* b, const T* dz, T* da, T* db, Rows s) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= s.n * s.width) return;
  const int64_t r = idx / s.width, i = idx % s.width;
  decltype(widen(T{})) ga, gb;
  gate_grad(widen(a[r * s.a + i]), widen(b[r * s.b + i]), widen(dz[r * s.dz + i]), ga, gb);
  store(ga, da + r * s.da + i);
  store(gb, db + r * s.db + i);
}

constexpr int kThreads = 256;

unsigned blocks_for(const Rows& s) { return static_cast<unsigned>((s.n * s.width + kThreads - 1) / kThreads); }

template <class T>
int forward(const void* a, const void* b, void* z, const Rows& s, void* stream) {
  if (s.n * s.width == 0) return 0;
  forward_kernel<T><<<blocks_for(s), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(z), s);
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int backward(const void* a, const void* b, const void* dz, void* da, void* db, const Rows& s, void* stream) {
  if (s.n * s.width == 0) return 0;
  backward_kernel<T><<<blocks_for(s), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const T*>(a), static_cast<const T*>(b), static_cast<const T*>(dz), static_cast<T*>(da),
      static_cast<T*>(db), s);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int probe_kernel() {
  cudaFuncAttributes attributes;
  const cudaError_t status = cudaFuncGetAttributes(&attributes, forward_kernel<float>);
  if (status != cudaSuccess) cudaGetLastError();  // not sticky: clear it for the next call
  return static_cast<int>(status);
}

int launch_forward(const void* a, const void* b, void* z, Element element, const Rows& rows, void* stream) {
  switch (element) {
    case Element::f64: return forward<double>(a, b, z, rows, stream);
    case Element::bf16: return forward<Bf16>(a, b, z, rows, stream);
    case Element::f16: return static_cast<int>(cudaErrorInvalidValue);  // no f16 kernel
    case Element::f32: break;
  }
  return forward<float>(a, b, z, rows, stream);
}

int launch_backward(const void* a, const void* b, const void* dz, void* da, void* db, Element element,
                    const Rows& rows, void* stream) {
  switch (element) {
    case Element::f64: return backward<double>(a, b, dz, da, db, rows, stream);
    case Element::bf16: return backward<Bf16>(a, b, dz, da, db, rows, stream);
    case Element::f16: return static_cast<int>(cudaErrorInvalidValue);  // no f16 kernel
    case Element::f32: break;
  }
  return backward<float>(a, b, dz, da, db, rows, stream);
}

}  // namespace ember::swiglu
