// CUDA kernels of the LEV spline product, on raw pointers; the per-element math (basis window,
// spline value, product gradient) is lev_spline_math.h, shared with the CPU kernels that the CPU
// tests cover. Backward runs in parallel over tokens: grad u one warp per (token, head, seed dim)
// reducing over rank with shuffles; grad S per (head, seed dim, token chunk) block, summed in shared
// memory into its own slice of a workspace, then over chunks in a fixed order (no atomics,
// deterministic).
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/lev_spline_launch.h"
#include "kernels/lev_spline_math.h"

namespace ember::lev {
namespace {

constexpr int kWarp = 32;
constexpr size_t kSharedBytes = 48 * 1024;  // dynamic shared memory every GPU grants without an opt-in

// One thread per (token, head, rank): M = sign * exp(sum_d log(|phi_d| + 1e-9)) (step 6).
template <class T>
__global__ void forward_kernel(const T* u, const T* S, T* M, CudaShape s, bool normalize) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= s.N * s.H * s.R) return;
  const int64_t rho = idx % s.R, nl = idx / s.R, l = nl % s.H;
  double log_sum = 0;  // in fp64 also for fp32 inputs, as the CPU kernel's log-space path
  int negative = 0;
  for (int64_t d = 0; d < s.DS; ++d) {
    const auto w = basis_window<T>(u[nl * s.DS + d], static_cast<int>(s.K), normalize);
    T phi, dphi;
    spline_at(w, S + ((l * s.DS + d) * s.K + w.first) * s.R + rho, s.R, phi, dphi);
    negative ^= phi < T(0);
    log_sum += log(static_cast<double>(abs_eps(phi)));
  }
  M[idx] = static_cast<T>((negative ? -1.0 : 1.0) * exp(log_sum));
}

// grad u[n, l, d] = sum_rho g_phi dphi/du: one warp per element, lanes stride the rank.
template <class T>
__global__ void grad_u_kernel(const T* gM, const T* M, const T* u, const T* S, T* gU, CudaShape s, bool normalize) {
  const int64_t element = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  if (element >= s.N * s.H * s.DS) return;  // warp-uniform: blockDim is a multiple of the warp
  const int64_t nl = element / s.DS, d = element % s.DS, l = nl % s.H;
  const auto w = basis_window<T>(u[element], static_cast<int>(s.K), normalize);
  const T* row = S + ((l * s.DS + d) * s.K + w.first) * s.R;
  T acc = 0;
  for (int64_t rho = lane; rho < s.R; rho += kWarp) {
    T phi, dphi;
    spline_at(w, row + rho, s.R, phi, dphi);
    acc += product_grad(gM[nl * s.R + rho] * M[nl * s.R + rho], phi) * dphi;
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (lane == 0) gU[element] = acc;
}

// Partial grad S of one (head, seed dim) over one chunk of tokens: block (ld, chunk), a thread per
// rank lane owns column rho of its block's slice, so the sums need neither atomics nor barriers.
// The slice is accumulated in shared memory when it fits (in_shared), else in place in the workspace.
template <class T>
__global__ void grad_s_partial_kernel(const T* gM, const T* M, const T* u, const T* S, T* partial, CudaShape s,
                                      int64_t chunk_len, bool normalize, bool in_shared) {
  extern __shared__ __align__(16) unsigned char shared_slice[];
  const int64_t ld = blockIdx.x, chunk = blockIdx.y, l = ld / s.DS, d = ld % s.DS;
  T* out = partial + (chunk * s.H * s.DS + ld) * s.K * s.R;
  T* acc = in_shared ? reinterpret_cast<T*>(shared_slice) : out;
  const T* S_ld = S + ld * s.K * s.R;
  const int64_t n_begin = chunk * chunk_len, n_end = min(s.N, n_begin + chunk_len);
  for (int64_t rho = threadIdx.x; rho < s.R; rho += blockDim.x) {
    for (int64_t k = 0; k < s.K; ++k) acc[k * s.R + rho] = T(0);
    for (int64_t n = n_begin; n < n_end; ++n) {
      const int64_t nl = n * s.H + l;
      const auto w = basis_window<T>(u[nl * s.DS + d], static_cast<int>(s.K), normalize);
      T phi, dphi;
      spline_at(w, S_ld + w.first * s.R + rho, s.R, phi, dphi);
      const T g_phi = product_grad(gM[nl * s.R + rho] * M[nl * s.R + rho], phi);
      for (int j = 0; j < Window<T>::count; ++j) acc[(w.first + j) * s.R + rho] += w.value[j] * g_phi;
    }
    if (in_shared)
      for (int64_t k = 0; k < s.K; ++k) out[k * s.R + rho] = acc[k * s.R + rho];
  }
}

// grad S = sum over chunks of the partials, in chunk order.
template <class T>
__global__ void sum_chunks_kernel(const T* partial, T* gS, int64_t size, int64_t chunks) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= size) return;
  T acc = 0;
  for (int64_t c = 0; c < chunks; ++c) acc += partial[c * size + i];
  gS[i] = acc;
}

int blocks_for(int64_t n, int threads) { return static_cast<int>((n + threads - 1) / threads); }

// Token chunks of the grad S pass: enough blocks x rank lanes to fill the GPU (~1M threads), at
// least 32 tokens per chunk, at most 16 chunks of workspace.
int64_t grad_s_chunks(CudaShape s) {
  const int64_t lanes = std::max<int64_t>(s.H * s.DS * s.R, 1);
  const int64_t wanted = ((int64_t{1} << 20) + lanes - 1) / lanes;
  return std::clamp<int64_t>(wanted, 1, std::min<int64_t>(16, std::max<int64_t>((s.N + 31) / 32, 1)));
}

}  // namespace

int64_t spline_backward_workspace(CudaShape s) { return grad_s_chunks(s) * s.H * s.DS * s.K * s.R; }

template <class T>
int launch_spline_forward(const T* u, const T* S, T* M, CudaShape s, bool normalize, void* stream) {
  const int threads = 256;
  if (s.N * s.H * s.R == 0) return 0;
  forward_kernel<T>
      <<<blocks_for(s.N * s.H * s.R, threads), threads, 0, static_cast<cudaStream_t>(stream)>>>(u, S, M, s, normalize);
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int launch_spline_backward(const T* gM, const T* M, const T* u, const T* S, T* gU, T* gS, T* workspace, CudaShape s,
                           bool normalize, void* stream) {
  auto* st = static_cast<cudaStream_t>(stream);
  const int64_t elements = s.N * s.H * s.DS, size_s = s.H * s.DS * s.K * s.R;
  if (elements > 0) {
    const int threads = 256;  // 8 warps, one element each
    grad_u_kernel<T><<<blocks_for(elements * kWarp, threads), threads, 0, st>>>(gM, M, u, S, gU, s, normalize);
  }
  if (size_s == 0) return static_cast<int>(cudaGetLastError());
  const int64_t chunks = grad_s_chunks(s), chunk_len = (s.N + chunks - 1) / chunks;
  const int lanes = static_cast<int>(std::min<int64_t>(((s.R + kWarp - 1) / kWarp) * kWarp, 256));
  const dim3 grid(static_cast<unsigned>(s.H * s.DS), static_cast<unsigned>(chunks));
  const size_t slice_bytes = static_cast<size_t>(s.K * s.R) * sizeof(T);
  const bool in_shared = slice_bytes <= kSharedBytes;
  grad_s_partial_kernel<T><<<grid, lanes, in_shared ? slice_bytes : 0, st>>>(gM, M, u, S, workspace, s, chunk_len,
                                                                            normalize, in_shared);
  sum_chunks_kernel<T><<<blocks_for(size_s, 256), 256, 0, st>>>(workspace, gS, size_s, chunks);
  return static_cast<int>(cudaGetLastError());
}

template int launch_spline_forward<float>(const float*, const float*, float*, CudaShape, bool, void*);
template int launch_spline_forward<double>(const double*, const double*, double*, CudaShape, bool, void*);
template int launch_spline_backward<float>(const float*, const float*, const float*, const float*, float*, float*,
                                           float*, CudaShape, bool, void*);
template int launch_spline_backward<double>(const double*, const double*, const double*, const double*, double*,
                                            double*, double*, CudaShape, bool, void*);

}  // namespace ember::lev
