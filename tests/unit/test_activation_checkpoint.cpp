// Activation checkpointing (model/activation_checkpoint.h, train.activation_checkpointing): the
// gradients of every parameter equal those without checkpointing, for full and every-k, in float64
// and under bf16 autocast; evaluation keeps no graph; a frozen input still trains the block.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>

#include "ember/checkpoint/parameters.h"
#include "ember/model/activation_checkpoint.h"
#include "ember/model/autocast.h"
#include "ember/model/lm.h"
#include "ember/model/mixers/hope_attention.h"

namespace {

ember::ModelConfig small(const std::string& mixer) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 16, c.n_layers = 4, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 32;
  c.mixer.kind = mixer.substr(0, mixer.find('+'));
  if (c.mixer.kind == "hope_attention") {  // levels learning in context: the recompute reads the same teach signal
    auto& h = c.mixer.get<ember::HopeAttentionConfig>();
    h.levels = 2, h.update = ember::CmsUpdate::chunked, h.chunk_sizes = {3, 5};
    if (mixer == "hope_attention+lens") h.signal = ember::TeachSource::lens;
  }
  return c;
}

// The forward under autocast and backward after it, as the trainer and PyTorch do; or backward
// inside the autocast scope too (the checkpointed block's backward follows the caller's state).
std::map<std::string, at::Tensor> grads_of(ember::LanguageModel& m, const at::Tensor& ids, bool bf16,
                                           bool backward_under_autocast) {
  std::optional<ember::AutocastScope> amp(std::in_place, at::kCPU, bf16);
  auto loss = m.loss(ids, torch::roll(ids, 1, 1));
  if (!backward_under_autocast) amp.reset();
  loss.backward();
  std::map<std::string, at::Tensor> out;
  for (const auto& p : m.named_parameters()) out[p.key()] = p.value().grad().clone();
  return out;
}

}  // namespace

TEST(ActivationCheckpoint, GradientsEqualThoseWithoutCheckpointing) {
  for (std::string mixer : {"attention", "gated_attention", "short_conv", "hope_attention", "hope_attention+lens"}) {
    for (auto [mode, k] : std::vector<std::pair<ember::ActivationCheckpointing, int64_t>>{
             {ember::ActivationCheckpointing::full, 1}, {ember::ActivationCheckpointing::every_k, 2}}) {
      for (auto [bf16, inside] : std::vector<std::pair<bool, bool>>{{false, false}, {true, false}, {true, true}}) {
        torch::manual_seed(1);
        ember::LanguageModel plain(small(mixer)), ckpt(small(mixer));
        ember::load_parameters(ckpt, ember::module_tensors(plain), "copy");
        if (!bf16) plain.to(torch::kDouble), ckpt.to(torch::kDouble);
        ckpt.set_activation_checkpointing(mode, k);
        auto ids = torch::randint(0, 40, {2, 12}, torch::kLong);
        auto a = grads_of(plain, ids, bf16, inside), b = grads_of(ckpt, ids, bf16, inside);
        ASSERT_EQ(a.size(), b.size());
        for (const auto& [name, g] : a) {
          ASSERT_TRUE(b[name].defined()) << mixer << " " << name;
          EXPECT_TRUE(torch::equal(g, b[name]))
              << mixer << " " << name << " bf16=" << bf16 << " backward under autocast=" << inside << " max diff "
              << (g - b[name]).abs().max().item<double>();
        }
      }
    }
  }
}

TEST(ActivationCheckpoint, EvaluationKeepsNoGraphAndAFrozenInputStillTrainsTheBlock) {
  auto w = torch::randn({3, 3}, torch::kDouble).requires_grad_();
  auto fn = [&](const at::Tensor& x) { return at::tanh(at::matmul(x, w)); };
  auto x = torch::randn({4, 3}, torch::kDouble);  // needs no gradient
  auto y = ember::checkpointed(fn, x);
  y.sum().backward();
  auto want = torch::autograd::grad({fn(x).sum()}, {w})[0];
  EXPECT_LT((w.grad() - want).abs().max().item<double>(), 1e-14);
  torch::NoGradGuard no_grad;
  EXPECT_FALSE(ember::checkpointed(fn, x).requires_grad());
}
