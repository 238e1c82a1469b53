// Named corpora (data/corpus_presets.h) against facts of their sources: kjv extracted from
// bible-kjv's `bible -f` is the 66 books of the King James Bible, one file each, chapters as
// paragraphs (Genesis 50, Psalms 150, Revelation 22), verse references dropped.
#include <gtest/gtest.h>

#include <filesystem>

#include "ember/data/corpus_presets.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace fs = std::filesystem;

namespace {

size_t paragraphs(const std::string& text) {
  size_t n = 1;
  for (auto at = text.find("\n\n"); at != std::string::npos; at = text.find("\n\n", at + 2)) ++n;
  return n;
}
}  // namespace

TEST(CorpusPresets, KjvIsTheSixtySixBooksWithTheirChapters) {
  const fs::path work = fs::temp_directory_path() / "ember_test_kjv";
  fs::remove_all(work);
  const auto src = ember::materialize_corpus("kjv", work);  // needs bible-kjv (scripts/setup.sh)
  EXPECT_EQ(src.val_fraction, 1.0);
  ASSERT_EQ(src.inputs.size(), 66u);
  EXPECT_EQ(fs::path(src.inputs.front()).filename(), "01_Ge.txt");
  EXPECT_EQ(fs::path(src.inputs.back()).filename(), "66_Rev.txt");
  const auto genesis = ember::read_text_file(src.inputs[0]), psalms = ember::read_text_file(src.inputs[18]),
             revelation = ember::read_text_file(src.inputs[65]);
  EXPECT_EQ(genesis.rfind("In the beginning God created the heaven and the earth. And the earth was without form", 0),
            0u)
      << genesis.substr(0, 120);
  EXPECT_EQ(paragraphs(genesis), 50u);
  EXPECT_EQ(paragraphs(psalms), 150u);
  EXPECT_EQ(paragraphs(revelation), 22u);
  EXPECT_NE(revelation.find("The grace of our Lord Jesus Christ be with you all. Amen."), std::string::npos);
  EXPECT_EQ(genesis.find("Ge1:"), std::string::npos);  // references dropped
  EXPECT_THROW(ember::materialize_corpus("wiki", work), ember::UsageError);
  fs::remove_all(work);
}
