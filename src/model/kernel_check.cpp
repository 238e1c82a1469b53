#include "ember/model/kernel_check.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>

#include "ember/model/autocast.h"
#include "kernels/projections.h"
#include "ember/model/linear_cross_entropy.h"
#include "ember/model/norm.h"
#include "ember/model/rope.h"
#include "kernels/lev_spline.h"
#include "kernels/swiglu.h"

namespace ember {
namespace {

using kernels::Op;
using kernels::Path;
using Tensors = std::vector<at::Tensor>;

// Random inputs from a generator of the check's own, made on the CPU and moved to the device.
struct Inputs {
  at::Device device;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(20261207);
  at::Tensor normal(at::IntArrayRef shape, at::ScalarType dtype = at::kFloat) {
    return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)).to(device, dtype);
  }
  at::Tensor uniform(at::IntArrayRef shape) { return at::rand(shape, gen, at::TensorOptions()).to(device); }
  at::Tensor ids(int64_t high, int64_t n) { return at::randint(high, {n}, gen, at::TensorOptions(at::kLong)).to(device); }
};

at::Tensor leaf(const at::Tensor& t) { return t.detach().requires_grad_(); }

Tensors gradients(const at::Tensor& loss, const Tensors& of) {
  auto g = torch::autograd::grad({loss}, of);
  return {g.begin(), g.end()};
}

// One op's forward and backward through the path `fused` names: its outputs, then its gradients.
struct Trial {
  Op op;
  std::function<Tensors(bool fused)> run;
};

Path path_of(bool fused) { return fused ? Path::fused : Path::aten; }

// The residual add and RMSNorm of a block: fp32 stream, block output and normed output in the
// autocast dtype (bf16) or fp32.
Trial norm_trial(Inputs& in, bool bf16) {
  const int64_t rows = 512, width = 1024;
  const auto low = bf16 ? at::kBFloat16 : at::kFloat;
  auto norm = std::make_shared<RMSNorm>(width, 1e-5);
  norm->to(in.device);
  auto x = in.normal({rows, width}), m = in.normal({rows, width}, low);
  auto gh = in.normal({rows, width}), gy = in.normal({rows, width});
  return {Op::norm, [=](bool fused) {
            const kernels::ScopedPath use(Op::norm, path_of(fused));
            auto xv = leaf(x), mv = leaf(m);
            auto [h, y] = norm->add_forward(xv, mv, low);
            auto g = gradients((h * gh).sum() + (y.to(at::kFloat) * gy).sum(), {xv, mv, norm->parameters()[0]});
            return Tensors{h.detach(), y.detach(), g[0], g[1], g[2]};
          }};
}

Trial swiglu_trial(Inputs& in, bool bf16) {
  const auto dtype = bf16 ? at::kBFloat16 : at::kFloat;
  auto a = in.normal({512, 1024}, dtype), b = in.normal({512, 1024}, dtype), dz = in.normal({512, 1024}, dtype);
  return {Op::swiglu, [=](bool fused) {
            const kernels::ScopedPath use(Op::swiglu, path_of(fused));
            auto av = leaf(a), bv = leaf(b);
            auto z = swiglu::gate(av, bv);
            auto g = torch::autograd::grad({z}, {av, bv}, {dz});
            return Tensors{z.detach(), g[0], g[1]};
          }};
}

Trial loss_head_trial(Inputs& in, bool bf16) {
  const int64_t rows = 256, width = 128, vocab = 1024;
  auto h = in.normal({rows, width}), w = in.normal({vocab, width}) * 0.1, y = in.ids(vocab, rows);
  return {Op::loss_head, [=](bool fused) {
            const kernels::ScopedPath use(Op::loss_head, path_of(fused));
            const AutocastScope autocast(h.device(), bf16);
            auto hv = leaf(h), wv = leaf(w);
            auto loss = linear_cross_entropy(hv, wv, y);
            auto g = gradients(loss, {hv, wv});
            return Tensors{loss.detach(), g[0], g[1]};
          }};
}

Trial rope_trial(Inputs& in, bool bf16) {
  const auto dtype = bf16 ? at::kBFloat16 : at::kFloat;
  auto rope = std::make_shared<Rope>(64, 256, 10000.0);
  auto x = in.normal({2, 4, 256, 64}, dtype), gy = in.normal({2, 4, 256, 64});
  return {Op::rope, [=](bool fused) {
            const kernels::ScopedPath use(Op::rope, path_of(fused));
            auto xv = leaf(x);
            auto y = rope->apply(xv);
            auto g = gradients((y.to(at::kFloat) * gy).sum(), {xv});
            return Tensors{y.detach(), g[0]};
          }};
}

// Three projections of one input (attention's q, k, v), under autocast in bf16.
Trial projections_trial(Inputs& in, bool bf16) {
  const int64_t rows = 256, width = 256;
  auto x = in.normal({rows, width});
  Tensors weights, upstream;
  for (int i = 0; i < 3; ++i) weights.push_back(in.normal({width, width}) * 0.05), upstream.push_back(in.normal({rows, width}));
  return {Op::projections, [=](bool fused) {
            const kernels::ScopedPath use(Op::projections, path_of(fused));
            const AutocastScope autocast(x.device(), bf16);
            Tensors leaves{leaf(x)};
            for (const auto& w : weights) leaves.push_back(leaf(w));
            auto ys = projections::of(leaves[0], {leaves.begin() + 1, leaves.end()});
            auto loss = at::zeros({}, x.options());
            for (size_t i = 0; i < ys.size(); ++i) loss = loss + (ys[i].to(at::kFloat) * upstream[i]).sum();
            Tensors out;
            for (const auto& y : ys) out.push_back(y.detach());
            for (const auto& g : gradients(loss, leaves)) out.push_back(g);
            return out;
          }};
}

// LEV's spline tensor product (always fp32: the embedding runs it outside autocast).
Trial lev_trial(Inputs& in, bool) {
  auto u = in.uniform({512, 4, 8}), S = in.normal({4, 8, 6, 16}) * 0.5, gm = in.normal({512, 4, 16});
  return {Op::lev, [=](bool fused) {
            auto uv = leaf(u), Sv = leaf(S);
            auto M = fused ? lev::spline_product(uv, Sv, true) : lev::spline_product_reference(uv, Sv, true);
            auto g = torch::autograd::grad({M}, {uv, Sv}, {gm});
            return Tensors{M.detach(), g[0], g[1]};
          }};
}

void synchronize(const at::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

double elapsed_ms(const at::Device& device, const Trial& trial, bool fused) {
  synchronize(device);
  const auto t0 = std::chrono::steady_clock::now();
  trial.run(fused);
  synchronize(device);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Both paths' median time over `rounds` rounds that alternate which goes first (ABBA...), after a
// warm-up of each (each ran once already, for the comparison), so that a drift of the machine hits both.
std::pair<double, double> fused_and_aten_ms(const at::Device& device, const Trial& trial, int rounds) {
  trial.run(false), trial.run(true);
  std::vector<double> fused, aten;
  for (int round = 0; round < rounds; ++round) {
    const bool fused_first = round % 2 == 0;
    (fused_first ? fused : aten).push_back(elapsed_ms(device, trial, fused_first));
    (fused_first ? aten : fused).push_back(elapsed_ms(device, trial, !fused_first));
  }
  return {median(fused), median(aten)};
}

// The worst disagreement over the tensors the two paths gave, with the name of where it was.
std::pair<double, std::string> compare(const Tensors& fused, const Tensors& aten, bool bf16, size_t outputs) {
  if (fused.size() != aten.size()) return {std::numeric_limits<double>::infinity(), "a different number of results"};
  double worst = 0.0;
  std::string where = "-";
  for (size_t i = 0; i < fused.size(); ++i) {
    const double e = disagreement(fused[i], aten[i], bf16);
    if (e > worst || std::isnan(e)) {
      worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
      where = i < outputs ? (i == 0 ? "output" : "output " + std::to_string(i + 1))
                          : "gradient " + std::to_string(i - outputs + 1);
    }
  }
  return {worst, where};
}

size_t outputs_of(Op op) { return op == Op::norm ? 2 : op == Op::projections ? 3 : 1; }

KernelCheckRow check(const Trial& trial, const at::Device& device, bool bf16, int rounds) {
  KernelCheckRow row;
  row.op = trial.op;
  try {
    const auto aten = trial.run(false);
    const auto fused = trial.run(true);
    std::tie(row.error, row.worst) = compare(fused, aten, bf16, outputs_of(trial.op));
    row.agrees = row.error <= 1.0;
    std::tie(row.fused_ms, row.aten_ms) = fused_and_aten_ms(device, trial, rounds);
  } catch (const std::exception& e) {
    row.agrees = false;
    row.error = std::numeric_limits<double>::infinity();
    const std::string what = e.what();
    row.worst = what.substr(0, what.find('\n'));
  }
  const bool not_slower = row.fused_ms <= row.aten_ms * kFusedTimeAllowance;
  row.choice = row.agrees && not_slower ? Path::fused : Path::aten;
  return row;
}

}  // namespace

double disagreement(const at::Tensor& f_in, const at::Tensor& a_in, bool bf16) {
  if (!f_in.defined() || !a_in.defined()) return f_in.defined() == a_in.defined() ? 0.0 : std::numeric_limits<double>::infinity();
  if (f_in.sizes() != a_in.sizes()) return std::numeric_limits<double>::infinity();
  const auto f = f_in.detach().to(at::kCPU, at::kDouble), a = a_in.detach().to(at::kCPU, at::kDouble);
  if (!at::equal(at::isfinite(f), at::isfinite(a))) return std::numeric_limits<double>::infinity();
  const bool fp64 = a_in.scalar_type() == at::kDouble && !bf16;
  // bf16: an element may be rounded differently a few times on the two paths (2^-8 each);
  // fp32: sums in another order.
  const double rtol = bf16 ? 0x1p-5 : fp64 ? 1e-10 : 1e-4, floor = bf16 ? 0x1p-7 : fp64 ? 1e-12 : 1e-5;
  const auto finite = at::isfinite(a);
  if (!finite.any().item<bool>()) return 0.0;
  const auto af = a.masked_select(finite), ff = f.masked_select(finite);
  const double scale = std::max(af.abs().max().item<double>(), 1e-30);
  return ((ff - af).abs() / (af.abs() * rtol + floor * scale)).max().item<double>();
}

std::vector<KernelCheckRow> check_kernels(const at::Device& device, bool bf16, int rounds) {
  if (rounds < 1) throw std::invalid_argument("check_kernels: rounds must be at least 1");
  Inputs in{device};
  const Trial trials[] = {loss_head_trial(in, bf16), norm_trial(in, bf16),        swiglu_trial(in, bf16),
                          rope_trial(in, bf16),      projections_trial(in, bf16), lev_trial(in, bf16)};
  std::vector<KernelCheckRow> rows;
  for (const auto& t : trials) rows.push_back(check(t, device, bf16, rounds));
  return rows;
}

}  // namespace ember
