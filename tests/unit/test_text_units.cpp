// Where `prepare text` may cut a text file into blocks (data/text_units.h, safe_text_cut): for every
// published pre-tokeniser (r50k's GPT-2 pattern, which ember's trained tokenizers use too,
// cl100k, o200k, llama3), encoding the text before the cut and after it gives the ids of the whole
// text, on crafted cases (a blank line before a word, o200k's ".\n/") and on random text from an
// alphabet of the characters that matter.
#include <gtest/gtest.h>

#include <random>

#include "ember/data/text_units.h"
#include "ember/data/tokenizer.h"
#include "ember/data/tokenizer_presets.h"

namespace text_units {
namespace {

void expect_cut_keeps_ids(const ember::Tokenizer& tok, const std::string& text) {
  const size_t cut = ember::safe_text_cut(text);
  if (cut == std::string::npos) return;
  ASSERT_LT(cut, text.size());
  auto pieces = tok.encode(text.substr(0, cut));
  const auto rest = tok.encode(text.substr(cut));
  pieces.insert(pieces.end(), rest.begin(), rest.end());
  EXPECT_EQ(pieces, tok.encode(text)) << tok.name() << ": cut at " << cut << " of '" << text << "'";
}

TEST(SafeTextCut, EncodingBothSidesGivesTheWholeTextsIds) {
  const std::vector<std::string> crafted{"para one.\n\nNext para", "foo.\n/usr/bin", "word\nNext", "word\n\nNext",
                                         "a b c next",           "x  next",       "1234\n5678", "end\r\nNext",
                                         "caf\xc3\xa9\nNext",   "x:\n'sNext",    "tabs\t\nNext", "a.\n\n/x y"};
  const std::string alphabet[] = {"a", "Z", "1", " ", "  ", "\n", "\n\n", ".", "/", "\r", "\xc3\xa9", "\t", "'s", "x"};
  std::mt19937 rng(11);
  for (const char* preset : {"r50k_base", "cl100k_base", "o200k_base", "llama3"}) {
    const ember::Tokenizer tok(ember::resolve_tokenizer(preset));
    for (const auto& text : crafted) expect_cut_keeps_ids(tok, text);
    for (int k = 0; k < 1500; ++k) {
      std::string text;
      for (int n = 4 + static_cast<int>(rng() % 30); n > 0; --n) text += alphabet[rng() % std::size(alphabet)];
      expect_cut_keeps_ids(tok, text);
    }
  }
}

TEST(SafeTextCut, ABlankLineIsNotACutAndAWordBeforeTheNewlineIs) {
  EXPECT_EQ(ember::safe_text_cut("one.\n\nTwo"), std::string::npos);
  EXPECT_EQ(ember::safe_text_cut("one\nTwo"), 4u);
  EXPECT_EQ(ember::safe_text_cut("one two"), 3u);
}

// A reader appends a read at a time and looks only at what it appended (safe_text_cut's `from`):
// while the text so far holds no cut, that finds the cut a scan of the whole text finds, on text
// where cuts are rare (CJK, full stops, lone spaces and newlines).
TEST(SafeTextCut, LookingOnlyAtWhatWasAppendedFindsTheCutOfTheWholeText) {
  const std::string alphabet[] = {"\xe4\xb8\x80", "\xe3\x80\x82", "a", "\n", " ", ".", "7"};
  std::mt19937 rng(12);
  int found = 0;
  for (int k = 0; k < 3000; ++k) {
    std::string text;
    size_t scanned = 0, cut = std::string::npos;
    for (int reads = 1 + static_cast<int>(rng() % 6); reads > 0 && cut == std::string::npos; --reads) {
      for (int n = static_cast<int>(rng() % 12); n > 0; --n) text += alphabet[rng() % std::size(alphabet)];
      cut = ember::safe_text_cut(text, scanned);
      if (cut == std::string::npos) EXPECT_EQ(ember::safe_text_cut(text), std::string::npos) << "'" << text << "'";
      scanned = text.size();
    }
    if (cut == std::string::npos) continue;
    ++found;
    EXPECT_EQ(cut, ember::safe_text_cut(text)) << "'" << text << "'";
  }
  EXPECT_GT(found, 300);  // the case where the two could differ is exercised
}

}  // namespace
}  // namespace text_units
