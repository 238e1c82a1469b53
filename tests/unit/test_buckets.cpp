// Frequency-stratified perplexity (eval/frequency_buckets.h): tokens land in the bucket of their
// training frequency, empty buckets merge into a neighbour, the buckets add up to the whole, and the
// per-token losses they are built from equal the model's loss.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/eval/frequency_buckets.h"
#include "ember/util/error.h"

using ember::BucketTally;

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
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 16, c.n_layers = 1, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 32;
  torch::manual_seed(3);
  ember::LanguageModel m(c);
  m.to(torch::kDouble);
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
