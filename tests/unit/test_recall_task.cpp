// The associative-recall task (data/recall_task.h): every sequence's layout, the answers' link to
// their keys' pairs, determinism by seed, the JSONL round trip and its errors, the option checks,
// and prepare_recall's files.
#include <set>

#include "ember/data/recall_task.h"
#include "ember/util/error.h"
#include "tests/unit/scratch.h"

namespace recall_test {

void expect_well_formed(const ember::RecallSpec& spec, const ember::RecallSequence& s) {
  ASSERT_EQ(static_cast<int64_t>(s.tokens.size()), spec.length());
  ASSERT_EQ(static_cast<int64_t>(s.answers.size()), spec.queries);
  std::set<uint32_t> keys;
  for (int64_t i = 0; i < spec.pairs; ++i) {
    const uint32_t k = s.tokens[2 * i], v = s.tokens[2 * i + 1];
    EXPECT_LT(k, spec.keys);
    EXPECT_GE(v, spec.keys);
    EXPECT_LT(v, spec.keys + spec.values);
    keys.insert(k);
  }
  EXPECT_EQ(static_cast<int64_t>(keys.size()), spec.pairs);  // distinct keys
  EXPECT_EQ(s.tokens[2 * spec.pairs], spec.keys + spec.values);  // the separator
  std::set<uint32_t> asked;
  for (int64_t a : s.answers) {
    const uint32_t query = s.tokens[a - 1];
    asked.insert(query);
    bool found = false;  // the answer is the value paired with the query key earlier on
    for (int64_t i = 0; i < spec.pairs; ++i)
      if (s.tokens[2 * i] == query) {
        found = true;
        EXPECT_EQ(s.tokens[a], s.tokens[2 * i + 1]);
      }
    EXPECT_TRUE(found) << "query " << query << " is no earlier key";
  }
  EXPECT_EQ(static_cast<int64_t>(asked.size()), spec.queries);  // distinct queries
}

}  // namespace recall_test

TEST(RecallTask, SequencesPairEveryQueryWithItsKeysValue) {
  for (const ember::RecallSpec spec : {ember::RecallSpec{}, ember::RecallSpec{4, 2, 4, 1}, ember::RecallSpec{50, 7, 3, 3}}) {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 200; ++i) recall_test::expect_well_formed(spec, ember::recall_sequence(spec, rng));
  }
  std::mt19937_64 a(3), b(3), c(4);
  EXPECT_EQ(ember::recall_sequence({}, a).tokens, ember::recall_sequence({}, b).tokens);
  EXPECT_NE(ember::recall_sequence({}, a).tokens, ember::recall_sequence({}, c).tokens);
}

TEST(RecallTask, ValuesAreUniformSoAnAnswerCannotBeGuessed) {
  ember::RecallSpec spec;
  std::mt19937_64 rng(11);
  std::vector<int64_t> count(static_cast<size_t>(spec.values));
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const auto s = ember::recall_sequence(spec, rng);
    for (int64_t a : s.answers) ++count[s.tokens[a] - spec.keys];
  }
  const double expected = static_cast<double>(n * spec.queries) / static_cast<double>(spec.values);
  for (int64_t c : count) EXPECT_NEAR(static_cast<double>(c), expected, 6 * std::sqrt(expected));
}

TEST(RecallTask, OptionsThatCannotMakeASequenceAreNamed) {
  auto message = [](ember::RecallSpec s) {
    try {
      s.check();
    } catch (const ember::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({8, 8, 9, 2}).find("--pairs 9"), std::string::npos);
  EXPECT_NE(message({8, 8, 4, 5}).find("--queries 5"), std::string::npos);
  EXPECT_NE(message({8, 1, 4, 2}).find("--values >= 2"), std::string::npos);
  EXPECT_TRUE(message({}).empty());
}

TEST(RecallTask, PrepareWritesShardsOfWholeSequencesAndATaskThatReadsBack) {
  const auto dir = ember::testing::scratch_dir("RecallTask", "prepare");
  ember::RecallPrepareOptions o;
  o.out_dir = dir / "data", o.train_sequences = 50, o.val_sequences = 5, o.task_items = 7, o.seed = 9;
  const auto summary = ember::prepare_recall(o);
  EXPECT_EQ(summary.train_tokens, 50 * o.spec.length());
  EXPECT_EQ(summary.val_tokens, 5 * o.spec.length());
  EXPECT_TRUE(std::filesystem::exists(dir / "data" / "manifest.json"));
  const auto items = ember::read_recall_items((dir / "data" / "recall_task.jsonl").string());
  ASSERT_EQ(items.size(), 7u);
  for (const auto& s : items) recall_test::expect_well_formed(o.spec, s);
  const auto again = dir / "again";
  o.out_dir = again;
  ember::prepare_recall(o);
  EXPECT_EQ(ember::read_recall_items((again / "recall_task.jsonl").string())[3].tokens, items[3].tokens);
}

TEST(RecallTask, BadTaskLinesAreNamedWithFileAndLine) {
  const auto dir = ember::testing::scratch_dir("RecallTask", "bad");
  auto error_of = [&](const std::string& text) {
    const auto path = ember::testing::write_text(dir, "task.jsonl", text);
    try {
      ember::read_recall_items(path.string());
    } catch (const ember::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("{\"tokens\": [1, 2, 3], \"answers\": [3]}\n").find("task.jsonl:1: answer position 3"),
            std::string::npos);
  EXPECT_NE(error_of("\n{\"tokens\": [1, 2]}\n").find("task.jsonl:2: expected"), std::string::npos);
  EXPECT_NE(error_of("").find("has no items"), std::string::npos);
  EXPECT_NE(error_of("{\"tokens\": [1, 2], \"answers\": []}").find("no answer positions"), std::string::npos);
}
