// ctest gpu.lev_kernels (label gpu): the CUDA LEV spline kernels against the CPU kernels on random
// inputs, forward and backward, fp64 and fp32, with and without the basis normalisation, at the
// paper's shape, at one whose rank, knots and token count fill no warp or chunk evenly, and at one
// whose rank exceeds a block's lanes and whose grad S slice outgrows shared memory in fp64. Exit 0 =
// match, 1 = mismatch or no CUDA kernels beside a device, 77 (ctest's skip code) = no CUDA device.
#include <torch/cuda.h>

#include <iostream>

#include "ember/util/error.h"
#include "kernels/lev_spline.h"
#include "tests/gpu/gpu_precondition.h"

namespace {

double relative_error(const at::Tensor& gpu, const at::Tensor& cpu) {
  return ((gpu.cpu() - cpu).abs().max() / cpu.abs().max().clamp_min(1e-30)).item<double>();
}

struct Shape {
  int64_t N, H, DS, K, R;
};

bool matches(Shape s, at::ScalarType dtype, bool normalize) {
  torch::manual_seed(0);
  auto u = at::rand({s.N, s.H, s.DS}, dtype), S = 1.0 + 0.1 * at::randn({s.H, s.DS, s.K, s.R}, dtype);
  auto gM = at::randn({s.N, s.H, s.R}, dtype);
  auto m_cpu = ember::lev::spline_forward_cpu(u, S, normalize);
  auto [gu_cpu, gs_cpu] = ember::lev::spline_backward_cpu(gM, m_cpu, u, S, normalize);
  auto uc = u.cuda(), Sc = S.cuda();
  auto m_gpu = ember::lev::spline_forward_cuda(uc, Sc, normalize);
  auto [gu_gpu, gs_gpu] = ember::lev::spline_backward_cuda(gM.cuda(), m_gpu, uc, Sc, normalize);
  const double tol = dtype == at::kDouble ? 1e-10 : 1e-4;
  const double e_m = relative_error(m_gpu, m_cpu), e_u = relative_error(gu_gpu, gu_cpu),
               e_s = relative_error(gs_gpu, gs_cpu);
  std::cout << "N " << s.N << " R " << s.R << " K " << s.K << (dtype == at::kDouble ? " fp64" : " fp32")
            << (normalize ? " normalised" : " plain") << " max rel diff: M " << e_m << ", dU " << e_u << ", dS " << e_s
            << "\n";
  return e_m < tol && e_u < tol && e_s < tol;
}

// The glue refuses shapes the kernels would read out of bounds with, before any launch.
bool refuses_bad_shapes() {
  auto u = at::rand({16, 2, 4}, at::kCUDA), S = at::ones({2, 4, 6, 8}, at::kCUDA);
  auto refused = [](auto&& call) {
    try {
      call();
    } catch (const ember::Error&) {
      return true;
    }
    return false;
  };
  const bool ok = refused([&] { ember::lev::spline_forward_cuda(u, S.narrow(1, 0, 3), true); }) &&
                  refused([&] { ember::lev::spline_forward_cuda(u, S.narrow(2, 0, 2), true); }) &&
                  refused([&] { ember::lev::spline_backward_cuda(at::ones({16, 2, 7}, at::kCUDA),
                                                                 at::ones({16, 2, 8}, at::kCUDA), u, S, true); });
  std::cout << "bad shapes " << (ok ? "refused" : "NOT refused") << "\n";
  return ok;
}

}  // namespace

int main() {
  if (const int rc = gpu_precondition("gpu.lev_kernels", ember::lev::cuda_kernels_compiled(),
                                      "no CUDA kernels in this build (configure with a CUDA LibTorch and nvcc)"))
    return rc;
  bool ok = true;
  for (Shape shape : {Shape{512, 8, 128, 16, 64}, Shape{1001, 3, 5, 7, 40}, Shape{97, 2, 3, 20, 320}})
    for (auto dtype : {at::kDouble, at::kFloat})
      for (bool normalize : {true, false}) ok = matches(shape, dtype, normalize) && ok;
  ok = refuses_bad_shapes() && ok;
  std::cout << (ok ? "MATCH" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
}
