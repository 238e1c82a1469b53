// The setup people train with, fused against ATen on the GPU: a tied model under bf16 autocast with
// every block checkpointed and 2 micro-batches per step, trained by training_loss (the head's
// gradient formed in forward, the tied table's rows added into it in place) and AdamW for 20
// steps, once with every kernels.* op fused and once with every op on ATen. The loss curves agree
// within bf16's noise at every step and both learn. Then the on-device check (model/kernel_check.h)
// in fp32 and bf16: every fused op agrees with ATen here.
#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <vector>

#include "ember/model/autocast.h"
#include "ember/model/kernel_check.h"
#include "ember/model/lm.h"
#include "ember/train/adamw.h"
#include "ember/kernels/kernel_choice.h"
#include "tests/gpu/gpu_precondition.h"

namespace {

using ember::kernels::Path;

std::vector<double> train(Path path) {
  ember::kernels::Choices all;
  for (auto op : ember::kernels::kAllOps) all[op] = path;
  const auto was = ember::kernels::install(all);
  ember::ModelConfig c;
  c.vocab_size = 512, c.d_model = 256, c.n_layers = 3, c.n_heads = 8, c.max_seq_len = 256, c.mlp.d_ff = 688;
  torch::manual_seed(5);
  ember::LanguageModel m(c);
  m.to(at::kCUDA);
  m.set_activation_checkpointing(ember::ActivationCheckpointing::full, 1);
  ember::NamedParameters params;
  for (const auto& p : m.named_parameters()) params.emplace_back(p.key(), p.value());
  ember::OptimConfig oc;
  ember::AdamW opt(params, oc);
  // A learnable stream: each token follows from the one before (next = 7 prev + 3 mod 512).
  std::vector<at::Tensor> columns{torch::randint(0, 512, {8}, torch::kLong)};
  while (columns.size() < 129) columns.push_back((columns.back() * 7 + 3).remainder(512));
  const auto seq = torch::stack(columns, 1).to(at::kCUDA);
  std::vector<double> losses;
  for (int step = 0; step < 20; ++step) {
    double loss = 0.0;
    for (int micro = 0; micro < 2; ++micro) {
      const auto rows = seq.narrow(0, 4 * micro, 4);
      const ember::AutocastScope amp(rows.device(), true);
      auto l = m.training_loss(rows.narrow(1, 0, 128), rows.narrow(1, 1, 128), 0.5);
      l.backward();
      loss += l.item<double>();
    }
    opt.step(3e-3);
    opt.zero_grad();
    losses.push_back(loss);
  }
  ember::kernels::install(was);
  return losses;
}

bool fused_training_matches_aten() {
  const auto fused = train(Path::fused), aten = train(Path::aten);
  double worst = 0.0;
  for (size_t i = 0; i < fused.size(); ++i) worst = std::max(worst, std::abs(fused[i] - aten[i]));
  const bool learns = fused.back() < fused.front() - 0.5 && aten.back() < aten.front() - 0.5;
  std::cout << "bf16, tied, checkpointed, 2 micro-batches, 20 AdamW steps: loss " << fused.front() << " -> "
            << fused.back() << " fused, " << aten.front() << " -> " << aten.back()
            << " ATen; worst difference " << worst << " (tolerance 5e-2); both learn: " << (learns ? "yes" : "NO")
            << "\n";
  return worst < 5e-2 && learns;
}

bool check_agrees(bool bf16) {
  bool ok = true;
  for (const auto& r : ember::check_kernels(at::Device(at::kCUDA, 0), bf16)) {
    std::cout << (bf16 ? "bf16 " : "fp32 ") << ember::kernels::op_name(r.op) << ": " << (r.agrees ? "agrees" : "DISAGREES")
              << " (" << r.error << " of its tolerance at " << r.worst << "), fused " << r.fused_ms << " ms, ATen "
              << r.aten_ms << " ms\n";
    ok = ok && r.agrees;
  }
  return ok;
}

}  // namespace

int main() {
  if (int code = gpu_precondition("gpu.training_fusions")) return code;
  const bool ok = fused_training_matches_aten() && check_agrees(false) && check_agrees(true);
  std::cout << (ok ? "OK" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
