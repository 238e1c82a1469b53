// Frequency-stratified perplexity (eval/frequency_buckets.h): tokens land in the bucket of their
// training frequency, empty buckets merge into a neighbour, the buckets add up to the whole, and the
// per-token losses they are built from equal the model's loss.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/data/shard.h"
#include "ember/eval/frequency_buckets.h"
#include "ember/eval/perplexity.h"
#include "ember/util/error.h"
#include "scratch.h"

using ember::BucketTally;

namespace {

// A one-layer float64 model over 40 ids, seeded.
std::unique_ptr<ember::LanguageModel> tiny_double_model(uint64_t seed) {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 16, c.n_layers = 1, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 32;
  torch::manual_seed(seed);
  auto m = std::make_unique<ember::LanguageModel>(c);
  m->to(torch::kDouble);
  return m;
}

}  // namespace

TEST(FrequencyBuckets, TokensLandInTheBucketOfTheirTrainingFrequency) {
  // 10^7 training tokens: id 0 never seen, id 1 at 1e-7, id 2 at 1e-6, id 3 at 5e-5, id 4 the rest.
  const std::vector<int64_t> counts = {0, 1, 10, 500, 10'000'000 - 511};
  BucketTally tally(counts, ember::default_bucket_edges());
  tally.add(torch::tensor({0, 1, 2, 3, 4, 4}), torch::tensor({1.0, 2.0, 3.0, 4.0, 0.5, 1.5}));
  const auto b = tally.merged();
  ASSERT_EQ(b.size(), 5u);
  const std::vector<std::pair<double, double>> ranges = {
      {0, 1e-7}, {1e-7, 1e-6}, {1e-6, 1e-5}, {1e-5, 1e-4}, {1e-4, 1}};
  const std::vector<int64_t> tokens = {1, 1, 1, 1, 2};
  const std::vector<double> losses = {1.0, 2.0, 3.0, 4.0, 1.0};
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_DOUBLE_EQ(b[i].lo, ranges[i].first) << i;
    EXPECT_DOUBLE_EQ(b[i].hi, ranges[i].second) << i;
    EXPECT_EQ(b[i].tokens, tokens[i]) << i;
    EXPECT_DOUBLE_EQ(b[i].loss(), losses[i]) << i;
  }
}

TEST(FrequencyBuckets, EmptyBucketsMergeAndTheBucketsAddUpToTheWhole) {
  const std::vector<int64_t> counts = {0, 1, 10, 500, 10'000'000 - 511};
  BucketTally tally(counts, ember::default_bucket_edges());
  tally.add(torch::tensor({1, 3, 3}), torch::tensor({2.0, 4.0, 6.0}));  // nothing rare, nothing common
  const auto b = tally.merged();
  ASSERT_EQ(b.size(), 2u);
  EXPECT_DOUBLE_EQ(b[0].lo, 0.0);  // the empty rarest bucket merged into the next
  EXPECT_DOUBLE_EQ(b[0].hi, 1e-6);
  EXPECT_EQ(b[0].tokens, 1);
  EXPECT_DOUBLE_EQ(b[1].lo, 1e-6);  // 1e-6 .. 1e-5 was empty too; the trailing empty one joins the last
  EXPECT_DOUBLE_EQ(b[1].hi, 1.0);
  EXPECT_EQ(b[1].tokens, 2);
  EXPECT_DOUBLE_EQ(b[1].loss(), 5.0);
  EXPECT_THROW(BucketTally(counts, {1e-4, 1e-6}), ember::UsageError);
  EXPECT_THROW(BucketTally(counts, {0.0, 1e-6}), ember::UsageError);
}

TEST(FrequencyBuckets, PerTokenLossesAverageToTheModelsLossAndTheEvaluationAddsUp) {
  auto model = tiny_double_model(3);
  auto& m = *model;
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(0, 40, {3, 9}, torch::kLong), targets = torch::randint(0, 40, {3, 9}, torch::kLong);
  const auto per_token = m.token_losses(ids, targets);
  EXPECT_EQ(per_token.sizes(), targets.sizes());
  EXPECT_NEAR(per_token.mean().item<double>(), m.loss(ids, targets).item<double>(), 1e-12);
  auto one = m.token_losses(ids.narrow(0, 1, 1), targets.narrow(0, 1, 1));
  EXPECT_LT((one[0] - per_token[1]).abs().max().item<double>(), 1e-12);
}

TEST(FrequencyBuckets, EdgesMustIncreaseStrictlyInsideZeroOne) {
  EXPECT_NO_THROW(ember::check_bucket_edges({1e-6, 1e-3}));
  EXPECT_NO_THROW(ember::check_bucket_edges({}));
  EXPECT_THROW(ember::check_bucket_edges({1e-4, 1e-6}), ember::UsageError);
  EXPECT_THROW(ember::check_bucket_edges({1e-4, 1e-4}), ember::UsageError);
  EXPECT_THROW(ember::check_bucket_edges({0.0, 1e-4}), ember::UsageError);
  EXPECT_THROW(ember::check_bucket_edges({1e-4, 1.0}), ember::UsageError);
}

// A full evaluation pass scores every window exactly once: 7 windows in batches of 3 are 3 + 3 + 1
// (the last partial, not dropped), and asking for more batches than one pass holds does not wrap
// around to count windows twice. Reference: each window's loss on its own, token-weighted.
TEST(Perplexity, AFullPassScoresEveryWindowOnce) {
  auto model = tiny_double_model(4);
  auto& m = *model;
  const int64_t T = 5, windows = 7;
  std::vector<uint32_t> tokens(static_cast<size_t>(T * windows + 1));
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint32_t>((i * 7 + i / 3) % 40);
  const auto dir = ember::testing::scratch_dir("eval", "full_pass");
  ember::write_shard(dir / "val.bin", tokens);
  ember::LoaderOptions o;
  o.batch = 3, o.seq_len = T, o.shuffle = false;
  ember::BatchLoader loader({dir / "val.bin"}, o);
  double total = 0;
  {
    torch::NoGradGuard no_grad;
    auto all = torch::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()));
    for (int64_t w = 0; w < windows; ++w) {
      auto win = all.narrow(0, w * T, T + 1).unsqueeze(0);
      total += m.loss(win.narrow(1, 0, T), win.narrow(1, 1, T)).item<double>() * T;
    }
  }
  for (int64_t batches : {0, 3, 10}) {
    const auto r = ember::evaluate_perplexity(m, loader, batches, torch::kCPU, false);
    EXPECT_EQ(r.tokens, windows * T) << batches;
    EXPECT_NEAR(r.loss, total / static_cast<double>(windows * T), 1e-12) << batches;
  }
  EXPECT_EQ(ember::evaluate_perplexity(m, loader, 1, torch::kCPU, false).tokens, 3 * T);
}
