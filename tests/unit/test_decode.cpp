// Incremental decoding (Mixer::decode, LanguageModel::decode): feeding a sequence token by token,
// or in uneven chunks, through the mixers' states (KV cache, convolution window) gives the logits
// of the full forward, for every mixer of the registry, MHA and GQA, in float64.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/lm.h"
#include "ember/model/mixer_registry.h"
#include "ember/util/error.h"

namespace {

ember::ModelConfig small(const std::string& mixer, int64_t kv_heads) {
  ember::ModelConfig c;
  c.vocab_size = 50, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = kv_heads, c.max_seq_len = 16;
  c.mlp.d_ff = 48;
  c.mixer.kind = mixer;
  return c;
}

at::Tensor decode_in_chunks(ember::LanguageModel& m, const at::Tensor& ids, const std::vector<int64_t>& chunks) {
  ember::DecodeState state;
  std::vector<at::Tensor> parts;
  int64_t start = 0;
  for (int64_t n : chunks) {
    parts.push_back(m.decode(ids.narrow(1, start, n), state));
    start += n;
  }
  EXPECT_EQ(state.position, ids.size(1));
  return at::cat(parts, 1);
}

}  // namespace

TEST(Decode, TokenByTokenAndChunkedEqualTheFullForwardForEveryMixer) {
  size_t kinds = 0;
  for (const auto& row : ember::mixer_kinds()) {
    for (int64_t kv : {0, 2}) {
      torch::manual_seed(1);
      ember::LanguageModel m(small(row.name, kv));
      m.to(torch::kDouble);
      torch::NoGradGuard no_grad;
      auto ids = torch::randint(0, 50, {2, 13}, torch::kLong);
      auto full = m.forward(ids);
      const std::string what = row.name + (kv ? " GQA" : " MHA");
      auto one_by_one = decode_in_chunks(m, ids, std::vector<int64_t>(13, 1));
      EXPECT_LT((one_by_one - full).abs().max().item<double>(), 1e-10) << what;
      auto uneven = decode_in_chunks(m, ids, {5, 1, 4, 3});
      EXPECT_LT((uneven - full).abs().max().item<double>(), 1e-10) << what;
    }
    ++kinds;
  }
  EXPECT_EQ(kinds, ember::mixer_kind_names().size());
}

TEST(Decode, TheStateStopsAtTheModelsLongestSequence) {
  ember::LanguageModel m(small("attention", 0));
  torch::NoGradGuard no_grad;
  ember::DecodeState state;
  m.decode(torch::zeros({1, 16}, torch::kLong), state);
  try {
    m.decode(torch::zeros({1, 1}, torch::kLong), state);
    FAIL() << "decoding past max_seq_len was accepted";
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds model.max_seq_len = 16"), std::string::npos) << e.what();
  }
}
