// Generation (eval/generate.h): greedy is the argmax of the full forward at every step; sampling
// follows softmax(z / T); top-k and top-p keep the right tokens; seeds reproduce; the stop token and
// the model's max_seq_len end a continuation.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <set>

#include "ember/eval/generate.h"
#include "ember/model/mixers/hope_attention.h"
#include "ember/util/error.h"

namespace {

ember::ModelConfig generate_model() {
  ember::ModelConfig c;
  c.vocab_size = 30, c.d_model = 32, c.n_layers = 2, c.n_heads = 4, c.max_seq_len = 16, c.mlp.d_ff = 48;
  return c;
}

std::vector<double> frequencies(const at::Tensor& logits, const ember::SamplingOptions& o, int draws) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  std::vector<double> f(static_cast<size_t>(logits.size(0)), 0.0);
  for (int i = 0; i < draws; ++i) f[static_cast<size_t>(ember::sample_token(logits, o, gen))] += 1.0 / draws;
  return f;
}

// Each greedy token is the argmax of the full forward over the prompt and the tokens before it.
void expect_argmax_of_the_forward(ember::LanguageModel& m, const std::vector<uint32_t>& prompt,
                                  const std::vector<uint32_t>& out) {
  std::vector<int64_t> seq(prompt.begin(), prompt.end());
  torch::NoGradGuard no_grad;
  for (uint32_t token : out) {
    auto logits = m.forward(torch::tensor(seq, torch::kLong).unsqueeze(0));
    EXPECT_EQ(token, logits[0][-1].argmax().item<int64_t>());
    seq.push_back(token);
  }
}

// Greedy generation of n tokens after the prompt {3, 17, 5}, checked token by token against the forward.
std::vector<uint32_t> greedy_checked(ember::LanguageModel& m, int64_t n, ember::SamplingOptions& o) {
  o.temperature = 0, o.max_tokens = n;
  const std::vector<uint32_t> prompt = {3, 17, 5};
  const auto out = ember::generate(m, prompt, o);
  EXPECT_EQ(out.size(), static_cast<size_t>(n));
  expect_argmax_of_the_forward(m, prompt, out);
  return out;
}

}  // namespace

TEST(Generate, GreedyIsTheArgmaxOfTheFullForwardAtEveryStep) {
  torch::manual_seed(1);
  ember::LanguageModel m(generate_model());
  m.to(torch::kDouble);
  ember::SamplingOptions o;
  const auto out = greedy_checked(m, 8, o);
  o.temperature = 0.7, o.top_k = 1;  // top-k 1 is greedy too
  EXPECT_EQ(ember::generate(m, {3, 17, 5}, o), out);
}

// Hope-attention learning in context: the decoder takes the levels' steps at the chunk boundaries
// the generated tokens cross, with their teach signals, as the forward over the whole sequence does.
TEST(Generate, GreedyWithLevelsLearningInContextIsTheArgmaxOfTheForward) {
  for (auto signal : {ember::TeachSource::two_pass, ember::TeachSource::lens}) {
    auto c = generate_model();
    c.init_std = 0.2;  // a teach signal large enough for the steps to matter
    c.mixer.kind = "hope_attention";
    auto& h = c.mixer.get<ember::HopeAttentionConfig>();
    h.levels = 3, h.update = ember::CmsUpdate::chunked, h.chunk_sizes = {2, 3, 0}, h.inner_lr = 0.05;
    h.signal = signal;
    torch::manual_seed(2);
    ember::LanguageModel m(c);
    m.to(torch::kDouble);
    ember::SamplingOptions o;
    greedy_checked(m, 10, o);
  }
}

TEST(Generate, SamplingFollowsTheTemperatureAndTheSeed) {
  auto z = torch::tensor({2.0, 1.0, 0.0, -1.0}, torch::kDouble);
  ember::SamplingOptions o;
  o.temperature = 0.5, o.seed = 3;
  const auto want = torch::softmax(z / 0.5, 0);
  const auto f = frequencies(z, o, 20000);
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(f[static_cast<size_t>(i)], want[i].item<double>(), 0.015) << i;
  EXPECT_EQ(frequencies(z, o, 50), frequencies(z, o, 50));  // the same seed, the same draws
  o.top_k = 2;                                              // only the two most likely tokens, in proportion
  const auto k2 = frequencies(z, o, 5000);
  EXPECT_EQ(k2[2] + k2[3], 0.0);
  EXPECT_NEAR(k2[0], want[0].item<double>() / (want[0] + want[1]).item<double>(), 0.03);
  auto tied = torch::tensor({2.0, 1.0, 1.0, -1.0}, torch::kDouble);  // the 2nd and 3rd tie: top-2 keeps both
  const auto kt = frequencies(tied, o, 3000);
  EXPECT_GT(kt[1], 0.05);
  EXPECT_GT(kt[2], 0.05);
  EXPECT_EQ(kt[3], 0.0);
  o.top_k = 0, o.temperature = 1.0, o.top_p = 0.6;  // probabilities .64 .24 .09 .03: .64 alone reaches .6
  const auto p = frequencies(z, o, 500);
  EXPECT_NEAR(p[0], 1.0, 1e-9);  // every draw
  o.top_p = 0.7;                 // the first two reach it
  const auto p2 = frequencies(z, o, 2000);
  EXPECT_EQ(p2[2] + p2[3], 0.0);
  EXPECT_GT(p2[1], 0.1);
  o.top_p = 0;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(0);
  EXPECT_THROW(ember::sample_token(z, o, gen), ember::UsageError);
}

TEST(Generate, TheStopTokenAndTheLongestSequenceEndAContinuation) {
  torch::manual_seed(2);
  ember::LanguageModel m(generate_model());
  ember::SamplingOptions o;
  o.temperature = 0, o.max_tokens = 10;
  const auto free_run = ember::generate(m, {1, 2}, o);
  ASSERT_GE(free_run.size(), 3u);
  o.stop = free_run[2];  // greedy is deterministic: it ends where that token would come
  const auto stopped = ember::generate(m, {1, 2}, o);
  EXPECT_LE(stopped.size(), 2u);
  for (auto t : stopped) EXPECT_NE(t, *o.stop);
  o.stop.reset();
  const std::vector<uint32_t> long_prompt(14, 4);  // max_seq_len 16: two fed back, one more read
  EXPECT_EQ(ember::generate(m, long_prompt, o).size(), 3u);
  EXPECT_THROW(ember::generate(m, std::vector<uint32_t>(17, 4), o), ember::UsageError);
  EXPECT_THROW(ember::generate(m, {}, o), ember::UsageError);
}
