// Raw-pointer launch API of the LEV spline CUDA kernels (no LibTorch headers: nvcc compiles
// lev_spline_cuda.cu against this alone). stream is a cudaStream_t; T = float or double. The
// launches return the launch's cudaError_t as an int (0 = success) for the glue to check.
#pragma once
#include <cstdint>

namespace ember::lev {

struct CudaShape {
  int64_t N, H, DS, K, R;  // tokens, heads, seed dims, knots, rank
};

// Elements of scratch launch_spline_backward needs: per-chunk partial sums of grad S, so that
// tokens are reduced by blocks in a fixed order instead of by atomics.
int64_t spline_backward_workspace(CudaShape s);

template <class T>
int launch_spline_forward(const T* u, const T* S, T* M, CudaShape s, bool normalize, void* stream);
// gU and gS are written (no need to zero them); workspace holds spline_backward_workspace(s) elements.
template <class T>
int launch_spline_backward(const T* gM, const T* M, const T* u, const T* S, T* gU, T* gS, T* workspace, CudaShape s,
                           bool normalize, void* stream);

}  // namespace ember::lev
