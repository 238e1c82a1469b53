// One op's path over a whole model on the GPU (shared by the gpu checks of the fused kernels):
// the loss and every parameter's gradient of one fp32 model with the fusion on against off, as the
// worst relative difference, printed with its tolerance.
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <vector>

#include "ember/model/lm.h"
#include "ember/kernels/kernel_choice.h"

// The model with `op` fused against on ATen's ops.
inline bool fused_model_matches(const char* what, ember::kernels::Op op) {
  ember::ModelConfig c;
  c.vocab_size = 512, c.d_model = 256, c.n_layers = 2, c.n_heads = 8, c.max_seq_len = 256, c.mlp.d_ff = 688;
  torch::manual_seed(2);
  ember::LanguageModel m(c);
  m.to(at::kCUDA);
  const auto ids = torch::randint(0, 512, {4, 128}, torch::kLong).cuda();
  auto grads = [&](bool fused) {
    const ember::kernels::ScopedPath path(op, fused ? ember::kernels::Path::fused : ember::kernels::Path::aten);
    m.zero_grad();
    auto loss = m.loss(ids, ids.roll(1, 1));
    loss.backward();
    std::vector<at::Tensor> out{loss.detach().cpu()};
    for (const auto& p : m.parameters()) out.push_back(p.grad().cpu());
    return out;
  };
  const auto fused = grads(true), aten = grads(false);
  double worst = 0.0;
  for (size_t i = 0; i < fused.size(); ++i) {
    const auto scale = std::max(1e-300, aten[i].abs().max().item<double>());
    worst = std::max(worst, (fused[i] - aten[i]).abs().max().item<double>() / scale);
  }
  std::cout << "fp32 model, " << what << " vs ATen's: worst relative difference " << worst << " (tolerance 1e-4)\n";
  return worst < 1e-4;
}
