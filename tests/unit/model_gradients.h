// A small fp64 model's loss and every parameter's gradient on fixed tokens, for the A/B tests of a
// fusion's switch (one definition, so that the test files can be compiled together in a unity group).
#pragma once
#include <torch/torch.h>

#include <vector>

#include "ember/model/lm.h"

namespace ember::testing {

// 2 attention blocks of width 32, vocabulary 40, 4 sequences of 32 tokens; parameters drawn from seed 2.
inline std::vector<at::Tensor> small_model_loss_and_gradients() {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.max_seq_len = 32, c.mlp.d_ff = 48;
  torch::manual_seed(2);
  ember::LanguageModel m(c);
  m.to(at::kDouble);
  const auto tokens = torch::randint(0, 40, {4, 33});
  auto loss = m.loss(tokens.narrow(1, 0, 32), tokens.narrow(1, 1, 32));
  loss.backward();
  std::vector<at::Tensor> out{loss.detach()};
  for (const auto& p : m.parameters()) out.push_back(p.grad());
  return out;
}

}  // namespace ember::testing
