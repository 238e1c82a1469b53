// Building LAMBADA-style items from text (data/lambada_passages.h) on hand-made passages whose
// answer is known, and the items read back by the task reader as context + target.
#include <gtest/gtest.h>

#include "ember/data/lambada_passages.h"
#include "ember/eval/task_scoring.h"
#include "scratch.h"

namespace {

const std::string kStory =
    "Anna met the baker. They talked about bread.\n\nLater she thanked Anna. It was 3.5 miles home. "
    "The dog barked at it.";

ember::LambadaBuildOptions words(int64_t lo, int64_t hi, bool in_context = true) {
  ember::LambadaBuildOptions o;
  o.min_words = lo, o.max_words = hi, o.require_in_context = in_context;
  return o;
}

}  // namespace

TEST(LambadaPassages, SentencesEndAtStopsBeforeWhitespace) {
  const auto s = ember::split_sentences("Hello there. \"Yes!\" he said.\nThe cost was 3.5 dollars?  Ok");
  const std::vector<std::string> want = {"Hello there.", "\"Yes!\"", "he said.", "The cost was 3.5 dollars?", "Ok"};
  EXPECT_EQ(s, want);
}

TEST(LambadaPassages, TheTargetMustAlreadyOccurInThePassage) {
  const auto p = ember::lambada_passages(kStory, words(5, 20));
  ASSERT_EQ(p.size(), 1u);  // "bread" is new at 8 words; "Anna" closes the first passage at 12
  EXPECT_EQ(p[0].text, "Anna met the baker. They talked about bread. Later she thanked Anna");
  EXPECT_EQ(p[0].target, "Anna");
}

TEST(LambadaPassages, AnyFinalWordOfThreeLettersWithoutTheFilter) {
  const auto p = ember::lambada_passages(kStory, words(5, 20, false));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].target, "bread");
  EXPECT_EQ(p[1].text, "Later she thanked Anna. It was 3.5 miles home");  // "it" (2 letters) never ends one
  EXPECT_EQ(p[1].target, "home");
}

TEST(LambadaPassages, LengthLimits) {
  EXPECT_TRUE(ember::lambada_passages(kStory, words(30, 40)).empty());       // the story has 22 words
  EXPECT_TRUE(ember::lambada_passages(kStory, words(6, 7, false)).empty());  // no sentence run fits 6-7
}

TEST(LambadaPassages, ItemsReadBackAsContextAndTarget) {
  const auto dir = ember::testing::scratch_dir("lambada_passages");
  const auto p = ember::lambada_passages(kStory, words(5, 20));
  const auto file = ember::testing::write_text(dir, "items.jsonl", "{\"text\": \"" + p[0].text + "\"}\n");
  const auto items = ember::read_lambada_items(file.string());
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].target, " Anna");
  EXPECT_EQ(items[0].context + items[0].target, p[0].text);
}

// Typographic quotes and dashes are punctuation, not letters: a passage ending in dialogue keeps its
// target, sentences end before a closing ” or ’, and an opening quote stays with the target, which
// is then exactly the text's last word (what eval scores).
TEST(LambadaPassages, TypographicPunctuationIsNotPartOfTheWord) {
  const auto s = ember::split_sentences("He said \u201cgo.\u201d She went\u2019s way. \u00abNon!\u00bb Fin");
  const std::vector<std::string> want = {"He said \u201cgo.\u201d", "She went\u2019s way.", "\u00abNon!\u00bb", "Fin"};
  EXPECT_EQ(s, want);
  const std::string story = "Harry met Ron at the gate. Then he said goodbye to \u201cHarry.\u201d";
  const auto p = ember::lambada_passages(story, words(5, 20));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].text, "Harry met Ron at the gate. Then he said goodbye to \u201cHarry");
  EXPECT_EQ(p[0].target, "\u201cHarry");
  const auto dash = ember::lambada_passages("The caf\u00e9 was near. We walked to the caf\u00e9\u2014", words(5, 20));
  ASSERT_EQ(dash.size(), 1u);  // letters beyond ASCII still count as letters
  EXPECT_EQ(dash[0].target, "caf\u00e9");
  EXPECT_TRUE(ember::lambada_passages("Anna and Bob ran. They ran to don\u2019t.", words(6, 20, false)).empty());
}
