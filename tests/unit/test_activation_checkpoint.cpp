// Activation checkpointing (model/activation_checkpoint.h, train.activation_checkpointing): the
// gradients of every parameter equal those without checkpointing, for full and every-k, in float64
// and under bf16 autocast; evaluation keeps no graph; a frozen input still trains the block.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <set>

#include "ember/run/parameters.h"
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

namespace {
// The autograd nodes reachable from a loss: how many in all, and how many are checkpointed blocks.
std::pair<int, int> graph_nodes(const at::Tensor& loss) {
  std::set<torch::autograd::Node*> seen;
  std::vector<torch::autograd::Node*> todo{loss.grad_fn().get()};
  int checkpoints = 0;
  while (!todo.empty()) {
    auto* node = todo.back();
    todo.pop_back();
    if (!node || !seen.insert(node).second) continue;
    if (node->name().find("Checkpoint") != std::string::npos) ++checkpoints;
    for (const auto& edge : node->next_edges()) todo.push_back(edge.function.get());
  }
  return {static_cast<int>(seen.size()), checkpoints};
}
}  // namespace

// Equal gradients would also come from a checkpointing that did nothing: the graph shows that the
// chosen blocks (all 4; blocks 0 and 2 with every_k 2) are one recompute node each, and that the
// graph is smaller by their inner nodes.
TEST(ActivationCheckpoint, TheChosenBlocksKeepNoGraphOfTheirOwn) {
  torch::manual_seed(2);
  ember::LanguageModel m(small("attention"));
  auto ids = torch::randint(0, 40, {2, 12}, torch::kLong);
  auto [plain_nodes, none] = graph_nodes(m.loss(ids, torch::roll(ids, 1, 1)));
  m.set_activation_checkpointing(ember::ActivationCheckpointing::every_k, 2);
  auto [half_nodes, two] = graph_nodes(m.loss(ids, torch::roll(ids, 1, 1)));
  m.set_activation_checkpointing(ember::ActivationCheckpointing::full, 1);
  auto [full_nodes, four] = graph_nodes(m.loss(ids, torch::roll(ids, 1, 1)));
  EXPECT_EQ(none, 0);
  EXPECT_EQ(two, 2);
  EXPECT_EQ(four, 4);
  const int per_block = (plain_nodes - full_nodes) / 4;  // a block's inner nodes less its checkpoint node
  EXPECT_GT(per_block, 5);
  EXPECT_EQ(plain_nodes - half_nodes, 2 * per_block);
}
