// ctest gpu.xent_kernel (label gpu): the CUDA softmax cross-entropy rows against the CPU loops (one
// math header, kernels/xent_rows.h) in fp64, fp32 and bf16, loss and in-place gradient; a target
// outside the vocabulary gives a NaN loss for its row only, and so does a +inf, -inf or NaN logit;
// an ignored row (with the count of rows read on the device) a zero loss and gradient; the scale of
// a root loss's gradients, skipped on the device when it is 1; and the whole loss head on the GPU
// (fused, bf16 weight gradient straight into fp32) against its ATen pass and against the CPU, also
// with ignored targets and an incoming gradient of 0.5.
// Exit 0 = match, 1 = mismatch or no kernel image for the GPU, 77 (ctest's skip code) = no device.
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <iostream>

#include "ember/model/autocast.h"
#include "ember/model/linear_cross_entropy.h"
#include "kernels/rope.h"
#include "ember/kernels/kernel_choice.h"
#include "kernels/xent.h"
#include "tests/gpu/gpu_precondition.h"

namespace {

double max_rel(const at::Tensor& a, const at::Tensor& b) {
  const auto x = a.cpu().to(at::kDouble), y = b.cpu().to(at::kDouble);
  return ((x - y).abs().max() / y.abs().max().clamp_min(1e-300)).item<double>();
}

bool rows_match(at::ScalarType dtype) {
  torch::manual_seed(3);
  const int64_t n = 67, V = 50257;
  const auto z = (4.0 * at::randn({n, V}, at::kDouble)).to(dtype);
  const auto y = at::randint(0, V, {n}, at::kLong);
  auto z_cpu = z.clone(), z_gpu = z.cuda();
  const auto l_cpu = ember::xent::softmax_xent_rows_(z_cpu, y, 0.7, 0.01, true);
  const auto l_gpu = ember::xent::softmax_xent_rows_(z_gpu, y.cuda(), 0.7, 0.01, true);
  // The same math in another summation order: fp64 / fp32 to round-off, bf16 gradients within one
  // rounding of the bf16 result (2^-8 relative) on either side.
  const double tol = dtype == at::kDouble ? 1e-12 : dtype == at::kFloat ? 1e-5 : 1.0 / 64;
  const double e_loss = max_rel(l_gpu, l_cpu), e_grad = max_rel(z_gpu, z_cpu);
  std::cout << c10::toString(dtype) << ": rows max rel diff loss " << e_loss << ", gradient " << e_grad << "\n";
  return e_loss < (dtype == at::kDouble ? 1e-12 : 1e-5) && e_grad < tol;
}

bool bad_target_is_nan() {
  auto z = at::randn({3, 100}, at::kCUDA);
  const auto losses = ember::xent::softmax_xent_rows_(z, at::tensor({1, 100, 2}, at::kLong).cuda(), 1, 1, true).cpu();
  const bool ok = std::isfinite(losses[0].item<double>()) && std::isnan(losses[1].item<double>()) &&
                  std::isfinite(losses[2].item<double>());
  std::cout << "out-of-range target: " << (ok ? "NaN for its row only" : "WRONG") << "\n";
  return ok;
}

// One meaning on every device: a row holding +inf, -inf or NaN (at the target or not) has a NaN
// loss and gradient, the other rows none, in each dtype.
bool nonfinite_rows_are_nan() {
  bool ok = true;
  for (auto dtype : {at::kDouble, at::kFloat, at::kBFloat16})
    for (double bad : {double(INFINITY), -double(INFINITY), double(NAN)}) {
      auto z = at::randn({4, 3000}, at::kCUDA).to(dtype);
      z[1][1234] = bad, z[3][7] = bad;  // row 3: at its target
      const auto losses =
          ember::xent::softmax_xent_rows_(z, at::tensor({7, 7, 7, 7}, at::kLong).cuda(), 1, 1, true).cpu();
      const auto grad = z.cpu();
      ok = ok && std::isfinite(losses[0].item<double>()) && std::isnan(losses[1].item<double>()) &&
           std::isfinite(losses[2].item<double>()) && std::isnan(losses[3].item<double>()) &&
           grad[1].isnan().all().item<bool>() && grad[0].isfinite().all().item<bool>();
    }
  std::cout << "non-finite logits (+inf, -inf, NaN): " << (ok ? "NaN for their rows only" : "WRONG") << "\n";
  return ok;
}

// Ignored rows: loss 0 and a zero gradient, whatever their logits; the others' gradient divided by
// the count of rows read on the device, as the CPU divides by its host count.
bool ignored_rows() {
  auto z = (3.0 * at::randn({5, 1000}, at::kDouble)).to(at::kFloat);
  z[2][5] = NAN;
  const auto y = at::tensor({3, 100, -100, -100, 999}, at::kLong);
  auto z_cpu = z.clone(), z_gpu = z.cuda();
  const auto l_cpu = ember::xent::softmax_xent_rows_(z_cpu, y, 0.5, 1.0 / 3, true, -100);
  const auto l_gpu = ember::xent::softmax_xent_rows_(z_gpu, y.cuda(), 0.5, 1.0, true, -100,
                                                     y.cuda().ne(-100).sum());  // 3 rows: g / 3
  const bool ok = max_rel(l_gpu, l_cpu) < 1e-5 && max_rel(z_gpu, z_cpu) < 1e-5 &&
                  l_gpu.cpu()[2].item<double>() == 0 && z_gpu.narrow(0, 2, 2).eq(0).all().item<bool>();
  std::cout << "ignored rows: " << (ok ? "match" : "WRONG") << "\n";
  return ok;
}

// The scale of a root loss's gradients on the device, left alone when the device scalar is 1.
bool root_scale_on_device() {
  auto x = at::randn({1000, 7}, at::kCUDA);
  const auto before = x.clone();
  ember::xent::scale_unless_one_(x, at::ones({}, at::kCUDA));
  bool ok = at::equal(x, before);
  ember::xent::scale_unless_one_(x, at::full({}, 0.5, at::kCUDA));
  ok = ok && at::equal(x, before * 0.5);
  auto b = before.to(at::kBFloat16);
  ember::xent::scale_unless_one_(b, at::full({}, 3.0, at::kCUDA));
  ok = ok && at::equal(b, before.to(at::kBFloat16) * 3.0);
  std::cout << "the root's scale on the device: " << (ok ? "match" : "WRONG") << "\n";
  return ok;
}

struct Grads {
  at::Tensor loss, h, w;
};

// upstream: the gradient the loss receives; with root, the head honours it on the device.
Grads head(const at::Tensor& h0, const at::Tensor& w0, const at::Tensor& y, bool bf16, bool fused, bool root = false,
           double upstream = 1.0) {
  const ember::kernels::ScopedPath path(ember::kernels::Op::loss_head,
                                       fused ? ember::kernels::Path::fused : ember::kernels::Path::aten);
  auto h = h0.clone().requires_grad_(), w = w0.clone().requires_grad_();
  at::Tensor loss;
  {
    ember::AutocastScope amp(h.device(), bf16);
    loss = ember::linear_cross_entropy(h, w, y, 1.0, 1000, {1.0, root, nullptr});
  }
  (upstream == 1.0 ? loss : loss * upstream).backward();
  return {loss.detach(), h.grad(), w.grad()};
}

// Ignored targets (a whole chunk of 1000 rows and scattered ones) and a root loss scaled by 0.5
// after it: the GPU's fused and ATen passes against the CPU's, fp32.
bool ignoring_head_matches() {
  torch::manual_seed(5);
  const int64_t N = 3000, D = 64, V = 5000;
  const auto h = at::randn({N, D}), w = 0.1 * at::randn({V, D});
  auto y = at::randint(0, V, {N}, at::kLong);
  y.narrow(0, 1000, 1000).fill_(-100), y.narrow(0, 0, 1000).masked_fill_(at::rand({1000}) < 0.3, -100);
  const auto cpu = head(h, w, y, false, true, false, 0.5);
  double worst = 0;
  for (bool fused : {true, false}) {
    const auto gpu = head(h.cuda(), w.cuda(), y.cuda(), false, fused, true, 0.5);
    worst = std::max({worst, std::abs(gpu.loss.item<double>() - cpu.loss.item<double>()) / cpu.loss.item<double>(),
                      max_rel(gpu.h, cpu.h), max_rel(gpu.w, cpu.w)});
  }
  std::cout << "ignored targets, root loss * 0.5: max rel diff vs CPU " << worst << "\n";
  return worst < 1e-4;
}

bool head_matches(bool bf16) {
  torch::manual_seed(4);
  const int64_t N = 4096, D = 256, V = 32000;
  const auto h = at::randn({N, D}), w = 0.05 * at::randn({V, D});
  const auto y = at::randint(0, V, {N}, at::kLong);
  const auto gpu = head(h.cuda(), w.cuda(), y.cuda(), bf16, true), aten = head(h.cuda(), w.cuda(), y.cuda(), bf16, false);
  const auto cpu = head(h, w, y, bf16, true);
  const double tol = bf16 ? 2e-2 : 1e-4;
  const double e_aten = std::max(max_rel(gpu.h, aten.h), max_rel(gpu.w, aten.w));
  const double e_cpu = std::max(max_rel(gpu.h, cpu.h), max_rel(gpu.w, cpu.w));
  const double e_loss = std::abs(gpu.loss.item<double>() - cpu.loss.item<double>()) / cpu.loss.item<double>();
  std::cout << (bf16 ? "bf16" : "fp32") << " head: loss rel diff vs CPU " << e_loss << ", gradients vs ATen pass "
            << e_aten << ", vs CPU " << e_cpu << "; weight gradient " << c10::toString(gpu.w.scalar_type()) << "\n";
  return e_loss < 1e-4 && e_aten < tol && e_cpu < tol && gpu.w.scalar_type() == at::kFloat;
}

}  // namespace

int main() {
  if (const int rc = gpu_precondition("gpu.xent_kernel", ember::rope::cuda_kernel_compiled(),
                                      "no CUDA kernels in this build (configure with a CUDA LibTorch and nvcc)"))
    return rc;
  if (!ember::xent::fused_supported(at::empty({1, 8}, at::kCUDA))) {
    std::cout << "FAIL: the cross-entropy kernel has no image for this GPU (see TORCH_CUDA_ARCH_LIST)\n";
    return 1;
  }
  bool ok = true;
  for (auto dtype : {at::kDouble, at::kFloat, at::kBFloat16}) ok = rows_match(dtype) && ok;
  ok = bad_target_is_nan() && ok;
  ok = nonfinite_rows_are_nan() && ok;
  ok = ignored_rows() && ok;
  ok = root_scale_on_device() && ok;
  ok = ignoring_head_matches() && ok;
  for (bool bf16 : {false, true}) ok = head_matches(bf16) && ok;
  std::cout << (ok ? "MATCH" : "MISMATCH") << "\n";
  return ok ? 0 : 1;
}
