// CUDA kernels of the LEV spline product, on raw pointers; the per-element math is
// lev_spline_math.h, shared with the CPU kernel that the CPU tests cover.
#include <cuda_runtime.h>

#include "kernels/lev_spline_launch.h"
#include "kernels/lev_spline_math.h"

namespace ember::lev {
namespace {

// One thread per (token, head, rank): M = sign * exp(sum_d log(|phi_d| + 1e-9)) (step 6).
template <class T>
__global__ void forward_kernel(const T* u, const T* S, T* M, CudaShape s, bool normalize) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= s.N * s.H * s.R) return;
  const int64_t rho = idx % s.R, nl = idx / s.R, l = nl % s.H;
  T log_sum = 0;
  int negative = 0;
  for (int64_t d = 0; d < s.DS; ++d) {
    const auto w = basis_window<T>(u[nl * s.DS + d], static_cast<int>(s.K), normalize);
    const T* row = S + ((l * s.DS + d) * s.K + w.first) * s.R + rho;
    T phi = 0;
    for (int j = 0; j < w.count; ++j) phi += w.value[j] * row[j * s.R];
    negative ^= phi < T(0);
    log_sum += log(abs_eps(phi));
  }
  M[idx] = (negative ? T(-1) : T(1)) * exp(log_sum);
}

// One thread per (head, dim, rank): it owns the gradient of S[l, d, :, rho]; the gradient of
// u[n, l, d] sums over rank with atomics.
template <class T>
__global__ void backward_kernel(const T* gM, const T* M, const T* u, const T* S, T* gU, T* gS, CudaShape s,
                                bool normalize) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= s.H * s.DS * s.R) return;
  const int64_t rho = idx % s.R, ld = idx / s.R, l = ld / s.DS, d = ld % s.DS;
  for (int64_t n = 0; n < s.N; ++n) {
    const int64_t nl = n * s.H + l;
    const auto w = basis_window<T>(u[nl * s.DS + d], static_cast<int>(s.K), normalize);
    const T* row = S + (ld * s.K + w.first) * s.R + rho;
    T phi = 0, dphi = 0;
    for (int j = 0; j < w.count; ++j) {
      phi += w.value[j] * row[j * s.R];
      dphi += w.deriv[j] * row[j * s.R];
    }
    const T g_phi = gM[nl * s.R + rho] * M[nl * s.R + rho] * (phi < T(0) ? T(-1) : T(1)) / abs_eps(phi);
    for (int j = 0; j < w.count; ++j) gS[(ld * s.K + w.first + j) * s.R + rho] += w.value[j] * g_phi;
    atomicAdd(gU + nl * s.DS + d, g_phi * dphi);
  }
}

int blocks_for(int64_t n, int threads) { return static_cast<int>((n + threads - 1) / threads); }

}  // namespace

template <class T>
void launch_spline_forward(const T* u, const T* S, T* M, CudaShape s, bool normalize, void* stream) {
  const int threads = 256;
  forward_kernel<T>
      <<<blocks_for(s.N * s.H * s.R, threads), threads, 0, static_cast<cudaStream_t>(stream)>>>(u, S, M, s, normalize);
}

template <class T>
void launch_spline_backward(const T* gM, const T* M, const T* u, const T* S, T* gU, T* gS, CudaShape s, bool normalize,
                            void* stream) {
  const int threads = 128;
  backward_kernel<T><<<blocks_for(s.H * s.DS * s.R, threads), threads, 0, static_cast<cudaStream_t>(stream)>>>(
      gM, M, u, S, gU, gS, s, normalize);
}

template void launch_spline_forward<float>(const float*, const float*, float*, CudaShape, bool, void*);
template void launch_spline_forward<double>(const double*, const double*, double*, CudaShape, bool, void*);
template void launch_spline_backward<float>(const float*, const float*, const float*, const float*, float*, float*,
                                            CudaShape, bool, void*);
template void launch_spline_backward<double>(const double*, const double*, const double*, const double*, double*,
                                             double*, CudaShape, bool, void*);

}  // namespace ember::lev
