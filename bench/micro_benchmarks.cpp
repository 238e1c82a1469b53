// Google Benchmark micro-benchmarks of the pieces the trainer's hot path is built from.
//   build/bench/ember_micro_bench --benchmark_filter=AdamW
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "ember/model/autocast.h"
#include "kernels/projections.h"
#include "ember/model/mixers/attention.h"
#include "ember/train/adamw.h"
#include "ember/kernels/kernel_choice.h"
#include "kernels/swiglu.h"

namespace {

// One fused AdamW pass over N parameters (ember's optimizer).
void BM_AdamWFused(benchmark::State& state) {
  auto p = torch::randn({state.range(0)}).unsqueeze(0).requires_grad_();
  ember::AdamW opt({{"w", p}}, ember::OptimConfig{});
  for (auto _ : state) {
    p.mutable_grad() = torch::ones_like(p);
    opt.step(1e-4);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AdamWFused)->Arg(1 << 22)->Unit(benchmark::kMillisecond);

// The same update as separate elementwise passes (what a naive optimizer does).
void BM_AdamWUnfused(benchmark::State& state) {
  auto p = torch::randn({state.range(0)}), g = torch::ones_like(p);
  auto m = torch::zeros_like(p), v = torch::zeros_like(p);
  int64_t t = 0;
  for (auto _ : state) {
    ++t;
    p.mul_(1 - 1e-4 * 0.1);
    m.mul_(0.9).add_(g, 0.1);
    v.mul_(0.95).addcmul_(g, g, 0.05);
    auto denom = (v / (1 - std::pow(0.95, t))).sqrt_().add_(1e-8);
    p.addcdiv_(m, denom, -1e-4 / (1 - std::pow(0.9, t)));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AdamWUnfused)->Arg(1 << 22)->Unit(benchmark::kMillisecond);

void attention_args(benchmark::internal::Benchmark* b) { b->Args({4, 12, 256, 64})->Unit(benchmark::kMillisecond); }

void BM_AttentionSdpa(benchmark::State& state) {
  auto q = torch::randn({state.range(0), state.range(1), state.range(2), state.range(3)});
  for (auto _ : state) benchmark::DoNotOptimize(at::scaled_dot_product_attention(q, q, q, {}, 0.0, true));
}
BENCHMARK(BM_AttentionSdpa)->Apply(attention_args);

void BM_AttentionReference(benchmark::State& state) {
  auto q = torch::randn({state.range(0), state.range(1), state.range(2), state.range(3)});
  for (auto _ : state) benchmark::DoNotOptimize(ember::Attention::reference_attention(q, q, q));
}
BENCHMARK(BM_AttentionReference)->Apply(attention_args);

// SwiGLU's gate and up projections and the gate z = SiLU(x W_gate) (x W_up), forward and backward,
// as the MLP runs them with the projections stacked (kernels/projections.h): the fused gate
// (kernels/swiglu.h; Arg 1) against ATen's silu, mul and their autograd (Arg 0); range(1): 0 fp32,
// 1 bf16 autocast. 2048 rows, d 512, d_ff 1376.
void BM_SwiGLUGate(benchmark::State& state) {
  const bool fused = state.range(0) != 0, bf16 = state.range(1) != 0;
  const int64_t rows = 2048, d = 512, F = 1376;
  auto x = torch::randn({rows, d}).requires_grad_();
  auto wg = (0.05 * torch::randn({F, d})).requires_grad_(), wu = (0.05 * torch::randn({F, d})).requires_grad_();
  using ember::kernels::Path;
  const ember::kernels::ScopedPath gate(ember::kernels::Op::swiglu, fused ? Path::fused : Path::aten);
  const ember::kernels::ScopedPath stacked(ember::kernels::Op::projections, Path::fused);
  for (auto _ : state) {
    at::Tensor z;
    {
      ember::AutocastScope amp(at::kCPU, bf16);
      const auto gu = ember::projections::of(x, {wg, wu});
      z = ember::swiglu::gate(gu[0], gu[1]);
    }
    z.sum().backward();
    benchmark::DoNotOptimize(x.grad().data_ptr());
    x.mutable_grad() = at::Tensor(), wg.mutable_grad() = at::Tensor(), wu.mutable_grad() = at::Tensor();
  }
  state.SetItemsProcessed(state.iterations() * rows * F);
}
BENCHMARK(BM_SwiGLUGate)->ArgsProduct({{1, 0}, {0, 1}})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
