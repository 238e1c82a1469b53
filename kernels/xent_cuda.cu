// CUDA softmax cross-entropy of rows of logits, fused (llm.c's classifier idea): one block per row
// reads it for its maximum and for its sum of exponentials, then turns it into its gradient in
// place, so the logits are never copied to fp32. The math is kernels/xent_rows.h, as on the CPU.
#include <cuda_runtime.h>

#include "kernels/xent_launch.h"
#include "kernels/xent_rows.h"

namespace ember::xent {
namespace {

constexpr int kThreads = 512;

// The block's maximum (NaN-propagating) or sum; every thread gets it.
template <class A, bool kMax>
__device__ A block_reduce(A v, A* shared) {
  for (int o = 16; o > 0; o >>= 1) {
    const A other = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? max_nan(v, other) : v + other;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / 32) ? shared[lane] : (kMax ? A(-INFINITY) : A(0));
    for (int o = 16; o > 0; o >>= 1) {
      const A other = __shfl_xor_sync(0xffffffffu, v, o);
      v = kMax ? max_nan(v, other) : v + other;
    }
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const A out = shared[0];
  __syncthreads();  // shared is reused by the next reduction
  return out;
}

template <class T, class A>
__global__ void xent_kernel(T* z, int64_t V, int64_t ld, const int64_t* y, int64_t ignore, A s, double g,
                            const int64_t* counted, bool grad, A* loss) {
  __shared__ A shared[kThreads / 32];
  const int64_t r = blockIdx.x;
  T* row = z + r * ld;
  const int64_t target = y[r];
  if (target == ignore) {  // counts for nothing: no loss, no gradient, whatever its logits (uniform over the block)
    if (threadIdx.x == 0) loss[r] = A(0);
    if (grad)
      for (int64_t j = threadIdx.x; j < V; j += blockDim.x) store(A(0), row + j);
    return;
  }
  if (target < 0 || target >= V) {  // uniform over the block: no thread reaches a barrier alone
    if (threadIdx.x == 0) loss[r] = A(NAN);
    return;
  }
  const A sz_target = s * widen(row[target]);  // read before the gradient overwrites it
  A m = -INFINITY, nonfinite = 0;              // NaN for a row holding a non-finite logit (xent_rows.h)
  for (int64_t j = threadIdx.x; j < V; j += blockDim.x) {
    const A v = s * widen(row[j]);
    m = max_step(m, v);
    nonfinite = nonfinite_step(nonfinite, v);
  }
  m = block_reduce<A, true>(m + nonfinite, shared);
  A sum = 0;
  for (int64_t j = threadIdx.x; j < V; j += blockDim.x) sum += exp_nonpositive(s * widen(row[j]) - m);
  const A lse = m + log(block_reduce<A, false>(sum, shared));
  if (threadIdx.x == 0) loss[r] = lse - sz_target;  // CE = lse - s z_y
  if (!grad) return;
  const A sg = s * static_cast<A>(counted ? mean_factor(g, *counted) : g);
  for (int64_t j = threadIdx.x; j < V; j += blockDim.x) {
    A p = exp_nonpositive(s * widen(row[j]) - lse);
    if (j == target) p -= A(1);  // - onehot(y)
    store(p * sg, row + j);
  }
}

// x *= *g unless *g is exactly 1, read on the device: no host sync, and no pass over x when it is 1.
template <class T>
__global__ void scale_unless_one_kernel(T* x, int64_t n, const T* g) {
  const auto gv = widen(*g);
  if (gv == 1) return;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    store(widen(x[i]) * gv, x + i);
}

template <class T, class A>
int launch(void* z, int64_t rows, int64_t V, int64_t ld, const int64_t* y, int64_t ignore, double s, double g,
           const int64_t* counted, bool grad, void* loss, void* stream) {
  if (rows == 0) return 0;
  xent_kernel<T, A><<<static_cast<unsigned>(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<T*>(z), V, ld, y, ignore, static_cast<A>(s), g, counted, grad, static_cast<A*>(loss));
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int launch_scale(void* x, int64_t n, const void* g, void* stream) {
  if (n == 0) return 0;
  constexpr int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  scale_unless_one_kernel<T>
      <<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), threads, 0, static_cast<cudaStream_t>(stream)>>>(
          static_cast<T*>(x), n, static_cast<const T*>(g));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int probe_xent_kernel() {
  cudaFuncAttributes attributes;
  const cudaError_t status = cudaFuncGetAttributes(&attributes, xent_kernel<float, float>);
  if (status != cudaSuccess) cudaGetLastError();  // not sticky: clear it for the next call
  return static_cast<int>(status);
}

int launch_xent(void* z, Element element, int64_t rows, int64_t V, int64_t ld, const int64_t* y, int64_t ignore,
                double s, double g, const int64_t* counted, bool grad, void* loss, void* stream) {
  switch (element) {
    case Element::f64: return launch<double, double>(z, rows, V, ld, y, ignore, s, g, counted, grad, loss, stream);
    case Element::bf16: return launch<Bf16, float>(z, rows, V, ld, y, ignore, s, g, counted, grad, loss, stream);
    case Element::f16: return static_cast<int>(cudaErrorInvalidValue);  // no f16 kernel
    case Element::f32: break;
  }
  return launch<float, float>(z, rows, V, ld, y, ignore, s, g, counted, grad, loss, stream);
}

int launch_scale_unless_one(void* x, Element element, int64_t n, const void* g, void* stream) {
  switch (element) {
    case Element::f64: return launch_scale<double>(x, n, g, stream);
    case Element::bf16: return launch_scale<Bf16>(x, n, g, stream);
    case Element::f16: return static_cast<int>(cudaErrorInvalidValue);  // no f16 kernel
    case Element::f32: break;
  }
  return launch_scale<float>(x, n, g, stream);
}

}  // namespace ember::xent
