// End-to-end training step throughput of ember (forward, backward, clipping, fused AdamW) for a
// model shape; prints one JSON line. bench/run_throughput.sh runs it beside the Python eager
// reference (bench/reference_train.py) of the identical model.
// Usage: ember_train_bench V D L H D_FF B T STEPS [fp32|bf16] [embedding kind] [OP=fused|aten ...]
// (OP a key of the kernels section, e.g. norm=aten; the others auto, resolved as ember train does:
// train/kernel_setup.h, the on-device check's cached table)
#include <chrono>
#include <iostream>

#include "bench_shape.h"
#include "ember/model/autocast.h"
#include "ember/model/lm.h"
#include "ember/train/adamw.h"
#include "ember/train/step_outcomes.h"
#include "ember/train/peak_flops.h"
#include "ember/util/denormals.h"
#include "ember/util/host_memory.h"
#include "ember/train/kernel_setup.h"

int main(int argc, char** argv) {
  if (argc < 9) {
    std::cerr << "usage: ember_train_bench V D L H D_FF B T STEPS [fp32|bf16] [tied|untied|lev|...] [OP=fused|aten ...]\n";
    return 2;
  }
  auto shape = ember::bench::parse_bench_shape(argv);
  ember::ModelConfig cfg = shape.model;
  const int64_t B = shape.batch, T = shape.seq_len, steps = std::stoll(argv[8]);
  const bool bf16 = argc > 9 && std::string(argv[9]) == "bf16";
  if (argc > 10) cfg.embedding.kind = argv[10];
  ember::KernelsConfig kernels;
  auto& paths = kernels.choices;
  for (int i = 11; i < argc; ++i) {
    const std::string a = argv[i], op = a.substr(0, a.find('=')), path = a.substr(a.find('=') + 1);
    bool known = false;
    for (auto o : ember::kernels::kAllOps)
      if (op == ember::kernels::op_name(o)) known = ember::enum_from_name(path, paths[o]);
    if (!known || a.find('=') == std::string::npos) {
      std::cerr << "ember_train_bench: '" << a << "' is not OP=fused|aten (OP: loss_head, norm, swiglu, rope, projections, lev)\n";
      return 2;
    }
  }
  ember::set_up_kernels(kernels, at::kCPU, bf16, nullptr, nullptr);
  ember::retain_freed_host_memory();  // as ember train does on CPUs
  ember::flush_denormals_on_all_threads();
  torch::manual_seed(0);
  ember::LanguageModel model(cfg);
  ember::OptimConfig ocfg;
  ember::AdamW opt(model.named_parameters().pairs(), ocfg);
  auto batch = torch::randint(0, cfg.vocab_size, {B, T + 1}, torch::kLong);
  auto x = batch.narrow(1, 0, T), y = batch.narrow(1, 1, T);
  auto step = [&] {
    {
      ember::AutocastScope autocast(at::kCPU, bf16);
      model.training_loss(x, y, 1.0).backward();  // as ember train calls it
    }
    const auto norm = ember::global_grad_norm_tensor(model.parameters());  // as ember train: nothing read back
    opt.step(1e-4, ember::clip_divisor(norm, 1.0), ember::nonfinite_flag(norm, norm));
    opt.zero_grad();
  };
  step();  // warm-up: allocations, oneDNN primitive caches
  step();
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < steps; ++i) step();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double peak = ember::measure_matmul_peak(at::kCPU, bf16 ? at::kBFloat16 : at::kFloat);
  const double tok_s = steps * B * T / s;
  const double mfu = tok_s * model.train_flops_per_token(T) / peak;
  std::cout << "{\"impl\": \"ember\", \"embedding\": \"" << cfg.embedding.kind << "\", \"precision\": \""
            << (bf16 ? "bf16" : "fp32") << "\", \"params\": " << model.num_parameters()
            << ", \"s_per_step\": " << s / steps << ", \"tokens_per_s\": " << tok_s
            << ", \"peak_gflops\": " << peak / 1e9 << ", \"mfu\": " << mfu << ", \"threads\": " << at::get_num_threads()
            << "}\n";
  return 0;
}
