// ctest gpu.rms_norm (label gpu): the CUDA RMSNorm with its residual add (kernels/rms_norm_cuda.cu)
// through the autograd functions (model/norm.h) against the CPU loops, which the unit tests hold to
// the formula in fp64: h, y and the gradients of x, m and the gain, for every storage combination
// (fp64; fp32; a bf16 block output; a bf16 normed output; both), with and without a gradient along
// the stream, over more rows than backward has blocks (each block then sums several rows' dg) and
// at a width that is not a multiple of the block; bf16 results also element by element within one
// rounding of the fp64 formula (tests/unit/rounding_steps.h); rows on both sides of the widest that
// backward sums in shared memory and wider ones (12,288 and 16,384, summed in place in global
// memory), fp32 and fp64; the plain norm too; and a model on the GPU with the fused norms against
// ATen's add and rms_norm, loss and every gradient.
// Exit 0 = match, 1 = mismatch or no kernel beside a device, 77 (ctest's skip code) = no CUDA device.
#include <torch/torch.h>

#include <iostream>
#include <optional>
#include <vector>

#include "ember/model/norm.h"
#include "kernels/rms_norm.h"
#include "kernels/rms_norm_launch.h"
#include "tests/gpu/fusion_model_check.h"
#include "tests/gpu/gpu_precondition.h"
#include "tests/unit/rounding_steps.h"

namespace {

// h, y, dx, dm, dg (on the CPU, in their types) of sum(y * py) (+ sum(h * ph)) through the norm on `device`.
std::vector<at::Tensor> run(const at::Tensor& x0, const at::Tensor& m0, const at::Tensor& g0, const at::Tensor& py,
                            const at::Tensor& ph, at::ScalarType y_type, at::Device device) {
  auto x = x0.detach().to(device).clone().requires_grad_(true);
  auto m = m0.detach().to(device).clone().requires_grad_(true);
  ember::RMSNorm norm(x0.size(-1), 1e-5);
  norm.to(device, g0.scalar_type());
  auto g = norm.named_parameters()["weight"];
  {
    torch::NoGradGuard no_grad;
    g.copy_(g0);
  }
  auto [h, y] = norm.add_forward(x, m, y_type);
  auto loss = (y.to(at::kDouble) * py.to(device)).sum();
  if (ph.defined())  // h read along the stream and by a plain norm; else h unused: no gradient along it
    loss = loss + (h.to(at::kDouble) * ph.to(device)).sum() + (norm.forward(h).to(at::kDouble) * ph.to(device)).sum();
  loss.backward();
  std::vector<at::Tensor> out;
  for (const auto& t : {h.detach(), y.detach(), x.grad(), m.grad(), g.grad()}) out.push_back(t.cpu());
  return out;
}

double relative(const at::Tensor& got, const at::Tensor& want) {
  const auto w = want.to(at::kDouble);
  return (got.to(at::kDouble) - w).abs().max().item<double>() / std::max(1e-300, w.abs().max().item<double>());
}

// Rows as wide as backward sums in shared memory, one wider and the widths of large models
// (12,288, 16,384), summed in place in global memory: the kernels take them and equal the CPU loops,
// over more rows than backward has blocks.
bool wide_rows_run() {
  bool ok = true;
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const int64_t widest_shared = ember::rms_norm::max_shared_width(c10::elementSize(dtype));
    for (const int64_t D : {widest_shared, widest_shared + 1, int64_t{12288}, int64_t{16384}}) {
      const int64_t rows = 1030;
      const auto x = torch::randn({rows, D}, dtype), m = torch::randn({rows, D}, dtype);
      const auto g = torch::rand({D}, dtype) + 0.5, p = torch::randn({rows, D}, torch::kDouble);
      const auto on_gpu = x.cuda();
      const bool fused = ember::rms_norm::fused_supported(on_gpu, on_gpu, g.cuda(), dtype);
      const auto cpu = run(x, m, g, p, p, dtype, at::kCPU), gpu = run(x, m, g, p, p, dtype, at::kCUDA);
      double worst = 0;
      for (size_t i = 0; i < cpu.size(); ++i) worst = std::max(worst, relative(gpu[i], cpu[i]));
      std::cout << c10::toString(dtype) << " at D " << D << (D > widest_shared ? " (dg in global memory)" : "")
                << ": worst relative difference " << worst << (fused ? "\n" : ", but ATen's path, not the kernel\n");
      ok = ok && worst <= (dtype == at::kDouble ? 1e-12 : 1e-5) && fused;
    }
  }
  return ok;
}

bool kernels_match() {
  torch::manual_seed(1);
  const int64_t rows = 2500, D = 333;  // more rows than backward's 1024 blocks; D not a multiple of 256
  const auto x64 = 3 * torch::randn({rows, D}, torch::kDouble), m64 = torch::randn({rows, D}, torch::kDouble);
  const auto g64 = torch::rand({D}, torch::kDouble) + 0.5;
  // bf16 values, so that a bf16 output's gradient (the probe in bf16) is the fp64 reference's exactly
  const auto py = torch::randn({rows, D}).to(at::kBFloat16).to(at::kDouble);
  const auto ph = torch::randn({rows, D}).to(at::kBFloat16).to(at::kDouble);
  struct Case {
    at::ScalarType stream, m, y;
    double tol;
  };
  const std::vector<Case> cases{{at::kDouble, at::kDouble, at::kDouble, 1e-12},
                                {at::kFloat, at::kFloat, at::kFloat, 1e-5},
                                {at::kFloat, at::kBFloat16, at::kFloat, 1.0 / 128},
                                {at::kFloat, at::kFloat, at::kBFloat16, 1.0 / 128},
                                {at::kFloat, at::kBFloat16, at::kBFloat16, 1.0 / 128}};
  const char* names[] = {"h", "y", "dx", "dm", "dg"};
  bool ok = true;
  for (const auto& c : cases)
    for (const bool along_stream : {true, false}) {
      const auto x = x64.to(c.stream), m = m64.to(c.m), g = g64.to(c.stream);
      const auto ph_used = along_stream ? ph : at::Tensor();
      const auto cpu = run(x, m, g, py, ph_used, c.y, at::kCPU), gpu = run(x, m, g, py, ph_used, c.y, at::kCUDA);
      const auto formula = run(x.to(at::kDouble), m.to(at::kDouble), g.to(at::kDouble), py, ph_used, at::kDouble,
                               at::kCPU);  // the fp64 loops: the formula to round-off (the unit tests)
      std::cout << c10::toString(c.stream) << "/" << c10::toString(c.m) << "/" << c10::toString(c.y)
                << (along_stream ? " with dh:" : " without dh:");
      for (size_t i = 0; i < cpu.size(); ++i) {
        const double e = relative(gpu[i], cpu[i]);
        std::cout << " " << names[i] << " " << e;
        ok = ok && e <= c.tol;
        if (gpu[i].scalar_type() != at::kBFloat16) continue;
        const auto check = ember::testing::close_to_reference(gpu[i], formula[i], 0.0);
        if (!check.ok) std::cout << " (" << names[i] << " not within one rounding of fp64: " << check.worst << ")";
        ok = ok && check.ok;
      }
      std::cout << " (tolerance " << c.tol << ")\n";
    }
  return ok;
}

}  // namespace

int main() {
  if (int code = gpu_precondition("gpu.rms_norm")) return code;
  const auto x = torch::ones({2, 8}).cuda();
  if (!ember::rms_norm::fused_supported(x, x, torch::ones({8}).cuda(), at::kFloat)) {
    std::cout << "FAIL: gpu.rms_norm: a CUDA device but no RMSNorm kernel for it in this build\n";
    return 1;
  }
  const bool ok = kernels_match() && wide_rows_run() && fused_model_matches("fused norms", ember::kernels::Op::norm);
  std::cout << (ok ? "OK" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
