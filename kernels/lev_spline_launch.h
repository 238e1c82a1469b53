// Raw-pointer launch API of the LEV spline CUDA kernels (no LibTorch headers: nvcc compiles
// lev_spline_cuda.cu against this alone). stream is a cudaStream_t; T = float or double.
#pragma once
#include <cstdint>

namespace ember::lev {

struct CudaShape {
  int64_t N, H, DS, K, R;  // tokens, heads, seed dims, knots, rank
};

template <class T>
void launch_spline_forward(const T* u, const T* S, T* M, CudaShape s, bool normalize, void* stream);
template <class T>
void launch_spline_backward(const T* gM, const T* M, const T* u, const T* S, T* gU, T* gS, CudaShape s, bool normalize,
                            void* stream);

}  // namespace ember::lev
