// Zero-shot task scoring (eval/task_scoring.h): continuation log-likelihoods against an independent
// per-sequence computation on a tiny float64 model (batched with padding, and with a context cut
// to fit), the accuracy tallies on hand-made numbers, and the task files' parsing and errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/data/bpe_trainer.h"
#include "ember/data/tokenizer.h"
#include "ember/data/tokenizer_presets.h"
#include "ember/eval/task_scoring.h"
#include "ember/util/error.h"
#include "scratch.h"
#include "test_helpers.h"

namespace {

ember::ModelConfig task_model() {
  ember::ModelConfig c;
  c.vocab_size = 30, c.d_model = 16, c.n_layers = 2, c.n_heads = 2, c.max_seq_len = 12;
  c.mlp.d_ff = 32;
  return c;
}

// log p(cont | ctx) and greedy-ness, one unpadded sequence at a time, softmax written out.
std::pair<double, bool> reference(ember::LanguageModel& m, std::vector<int64_t> seq, size_t n) {
  torch::NoGradGuard no_grad;
  auto logits = m.forward(torch::tensor(std::vector<int64_t>(seq.begin(), seq.end() - 1)).unsqueeze(0))[0];
  double total = 0;
  bool greedy = true;
  for (size_t t = seq.size() - n; t < seq.size(); ++t) {
    auto row = logits[static_cast<int64_t>(t) - 1];
    const double log_z = std::log(row.exp().sum().item<double>());
    total += row[seq[t]].item<double>() - log_z;
    greedy = greedy && row.argmax().item<int64_t>() == seq[t];
  }
  return {total, greedy};
}

}  // namespace

TEST(Tasks, ContinuationScoresEqualAnIndependentComputation) {
  torch::manual_seed(3);
  ember::LanguageModel m(task_model());
  m.to(torch::kDouble);
  const std::vector<uint32_t> ctx{4, 9, 2};
  const std::vector<std::vector<uint32_t>> conts{{7}, {1, 2, 3, 4}, {29, 0}};
  const auto scores = ember::score_continuations(m, ctx, conts, torch::kCPU);
  ASSERT_EQ(scores.size(), 3u);
  for (size_t i = 0; i < conts.size(); ++i) {
    std::vector<int64_t> seq(ctx.begin(), ctx.end());
    seq.insert(seq.end(), conts[i].begin(), conts[i].end());
    const auto [logprob, greedy] = reference(m, seq, conts[i].size());
    EXPECT_NEAR(scores[i].logprob, logprob, 1e-10) << i;
    EXPECT_EQ(scores[i].greedy, greedy) << i;
    EXPECT_EQ(scores[i].tokens, static_cast<int64_t>(conts[i].size()));
    EXPECT_LT(scores[i].logprob, 0.0);
  }
  // A context longer than the model takes loses tokens from its left: max_seq_len 12 -> 13 tokens.
  std::vector<uint32_t> long_ctx;
  for (uint32_t t = 0; t < 20; ++t) long_ctx.push_back(t % 30);
  const auto cut = ember::score_continuations(m, long_ctx, {{5, 6}}, torch::kCPU).front();
  std::vector<int64_t> seq(long_ctx.end() - 11, long_ctx.end());
  seq.push_back(5), seq.push_back(6);
  EXPECT_NEAR(cut.logprob, reference(m, seq, 2).first, 1e-10);
  EXPECT_NE(ember::testing::error_message([&] { ember::score_continuations(m, {}, {{1}}, torch::kCPU); }).find("no tokens"),
            std::string::npos);
  EXPECT_NE(ember::testing::error_message([&] { ember::score_continuations(m, {1}, {{30}}, torch::kCPU); }).find("token id 30, outside"),
            std::string::npos);
}

TEST(Tasks, GreedyIsTheArgmaxAtEveryContinuationToken) {
  torch::manual_seed(4);
  ember::LanguageModel m(task_model());
  m.to(torch::kDouble);
  torch::NoGradGuard no_grad;
  std::vector<uint32_t> seq{3};
  for (int i = 0; i < 4; ++i) {  // the model's own greedy continuation
    auto ids = torch::tensor(std::vector<int64_t>(seq.begin(), seq.end())).unsqueeze(0);
    seq.push_back(static_cast<uint32_t>(m.forward(ids)[0][-1].argmax().item<int64_t>()));
  }
  const std::vector<uint32_t> cont(seq.begin() + 1, seq.end());
  auto other = cont;
  other.back() = (other.back() + 1) % 30;
  const auto s = ember::score_continuations(m, {3}, {cont, other}, torch::kCPU);
  EXPECT_TRUE(s[0].greedy);
  EXPECT_FALSE(s[1].greedy);
  EXPECT_GT(s[0].logprob, s[1].logprob);
}

TEST(Tasks, ChoiceTallyRawAndLengthNormalised) {
  ember::ChoiceTally t;
  t.add({-10.0, -12.0}, {2, 20}, 1);  // raw picks 0; per character -5 vs -0.6 picks 1
  t.add({-3.0, -1.0, -2.0}, {1, 1, 1}, 1);
  t.add({-1.0, -1.0}, {4, 4}, 1);  // a tie goes to the first
  EXPECT_EQ(t.items, 3);
  EXPECT_EQ(t.correct, 1);
  EXPECT_EQ(t.correct_norm, 2);
  EXPECT_DOUBLE_EQ(t.accuracy_norm(), 2.0 / 3.0);
  ember::LambadaTally l;
  l.items = 2, l.negative_logprob = 3.0;
  EXPECT_DOUBLE_EQ(l.perplexity(), std::exp(1.5));
}

TEST(Tasks, TaskFilesParseAndBadOnesNameTheLine) {
  const auto dir = ember::testing::scratch_dir("tasks", "files");
  const auto good = ember::testing::write_text(
      dir, "c.jsonl",
      "{\"context\": \"The cat\", \"endings\": [\"sat.\", \" ran.\"], \"label\": 0}\n\n"
      "{\"ctx\": \"A dog \", \"choices\": [\"barks\", \"meows\", \"sings\"], \"label\": \"2\"}\n");
  const auto items = ember::read_choice_items(good.string());
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].endings, (std::vector<std::string>{" sat.", " ran."}));
  EXPECT_EQ(items[1].endings, (std::vector<std::string>{"barks", "meows", "sings"}));  // the context ends in a space
  EXPECT_EQ(items[1].label, 2);
  // acc_norm's lengths are the harness's len(choice): code points, without the added space.
  EXPECT_EQ(items[0].ending_chars, (std::vector<size_t>{4, 5}));
  const auto accented = ember::read_choice_items(
      ember::testing::write_text(dir, "u.jsonl",
                                 "{\"context\": \"x\", \"endings\": [\"h\u00e9llo\", \"ab\"], \"label\": 0}\n")
          .string());
  EXPECT_EQ(accented[0].endings[0], " h\xc3\xa9llo");
  EXPECT_EQ(accented[0].ending_chars, (std::vector<size_t>{5, 2}));
  // "the cat sat on the" + " song." (-7.681) vs " m" (-1.900): per character -1.536 beats -1.900,
  // so the harness picks "song."; per byte with the space (-1.280 vs -0.950) would pick "m".
  ember::ChoiceTally harness;
  harness.add({-7.681, -1.900}, {5, 1}, 0);
  EXPECT_EQ(harness.correct_norm, 1);
  auto bad = [&](const std::string& text) {
    return ember::testing::error_message([&] { ember::read_choice_items(ember::testing::write_text(dir, "b.jsonl", text).string()); });
  };
  EXPECT_NE(bad("{\"context\": \"x\", \"endings\": [\"a\", \"b\"], \"label\": 2}\n")
                .find("b.jsonl:1: label 2 is not an index"),
            std::string::npos);
  EXPECT_NE(bad("\n{\"endings\": [\"a\", \"b\"], \"label\": 0}\n").find("b.jsonl:2: missing \"context\""),
            std::string::npos);
  EXPECT_NE(bad("{\"context\": \"x\", \"endings\": [\"a\"], \"label\": 0}\n").find("at least 2 endings"),
            std::string::npos);
  EXPECT_NE(bad("not json\n").find("b.jsonl:1: not a JSON object"), std::string::npos);
  // Found by fuzz_task_jsonl (tests/fuzz/corpus/task_jsonl/crash-*): a list where text belongs escaped
  // as nlohmann's type_error.
  EXPECT_NE(bad("{\"context\": [\"x\"], \"endings\": [\"a\", \"b\"], \"label\": 0}\n")
                .find("b.jsonl:1: \"context\" must be a string, not array"),
            std::string::npos);
  EXPECT_NE(bad("{\"context\": \"x\", \"endings\": [\"a\", 7], \"label\": 0}\n").find("\"endings\" must be a string, not number"),
            std::string::npos);
  EXPECT_NE(ember::testing::error_message([&] {
              ember::read_lambada_items(ember::testing::write_text(dir, "lt.jsonl", "{\"text\": {\"a\": 1}}\n").string());
            }).find("lt.jsonl:1: \"text\" must be a string, not object"),
            std::string::npos);
  const auto lam =
      ember::testing::write_text(dir, "l.txt", "{\"text\": \"the cat sat on the mat \"}\nplain text passage here\n");
  const auto passages = ember::read_lambada_items(lam.string());
  ASSERT_EQ(passages.size(), 2u);
  EXPECT_EQ(passages[0].context, "the cat sat on the");
  EXPECT_EQ(passages[0].target, " mat");
  EXPECT_EQ(passages[1].target, " here");
  const auto one = ember::testing::write_text(dir, "one.txt", "word\n");
  EXPECT_NE(ember::testing::error_message([&] { ember::read_lambada_items(one.string()); }).find("one.txt:1: a passage needs a context"),
            std::string::npos);
  EXPECT_NE(ember::testing::error_message([&] { ember::read_lambada_items((dir / "none.txt").string()); }).find("not found"),
            std::string::npos);
}

// The harness's request encoding with a BPE that merged " sat": a context ending in a space gives
// that space to the continuation, which is then the one merged token, not a space then "sat".
TEST(Tasks, RequestsAreEncodedAsTheHarnessDoes) {
  std::vector<std::string> texts(20, "the cat sat on the mat. the cat sat. ");
  ember::BpeTrainOptions opt;
  opt.vocab_size = 268;
  const auto dir = ember::testing::scratch_dir("tasks", "bpe");
  ember::save_trained_tokenizer(ember::train_bpe_on_text(texts, opt), dir / "t.tiktoken");
  const ember::TextEncoder enc(
      std::make_shared<const ember::Tokenizer>(ember::resolve_tokenizer((dir / "t.tiktoken").string())));
  ASSERT_EQ(enc.encode(" sat").size(), 1u);
  const auto [context, ending] = ember::encode_request(enc, "the cat ", "sat");
  EXPECT_EQ(context, enc.encode("the cat"));
  EXPECT_EQ(ending, enc.encode(" sat"));
  const auto [context2, ending2] = ember::encode_request(enc, "the cat", " sat");
  EXPECT_EQ(context2, context);
  EXPECT_EQ(ending2, ending);
}
