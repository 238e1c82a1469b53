// `prepare text`: JSONL and text documents -> shards with separators, split, counts, manifest,
// clear errors; HTML stripping for the handbook corpus.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "ember/data/bpe_trainer.h"
#include "ember/data/html_text.h"
#include "ember/data/prepare_text.h"
#include "ember/data/shard.h"
#include "ember/data/tokenizer.h"
#include "ember/data/tokenizer_presets.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "scratch.h"

namespace fs = std::filesystem;

namespace {

fs::path text_scratch(const std::string& name) { return ember::testing::scratch_dir("prepare_text", name); }

// A small trained tokenizer (so the test needs no published rank files).
std::string small_tokenizer(const fs::path& dir) {
  ember::BpeTrainOptions opt;
  opt.vocab_size = 300;
  const auto r =
      ember::train_bpe_on_text({"the quick brown fox jumps over the lazy dog. " + std::string(50, 'a')}, opt);
  const fs::path file = dir / "tok.tiktoken";
  ember::save_trained_tokenizer(r, file);
  return file.string();
}

std::vector<uint32_t> all_tokens(const fs::path& dir, const std::string& split) {
  std::vector<uint32_t> out;
  for (const auto& p : ember::resolve_shards({(dir / (split + "_*.bin")).string()}, "test")) {
    ember::ShardFile f(p);
    for (int64_t i = 0; i < f.size(); ++i) out.push_back(f.token(i));
  }
  return out;
}

}  // namespace

TEST(PrepareText, JsonlAndTextRoundTrip) {
  const fs::path d = text_scratch("roundtrip");
  ember::TextPrepareOptions opt;
  opt.tokenizer = small_tokenizer(d);
  std::ofstream(d / "docs.jsonl") << "{\"text\": \"the fox\"}\n\n{\"text\": \"lazy dog\", \"id\": 2}\n";
  fs::create_directories(d / "txt");
  for (int i = 0; i < 40; ++i)
    std::ofstream(d / "txt" / ("doc" + std::to_string(i) + ".txt")) << "doc " << i << " the quick\n";
  opt.inputs = {(d / "docs.jsonl").string(), (d / "txt").string()};
  opt.out_dir = d / "out";
  opt.val_fraction = 0.25;
  opt.progress = false;
  const auto s = ember::prepare_text(opt);
  EXPECT_EQ(s.files, 41);
  EXPECT_EQ(s.documents, 42);  // 2 JSONL lines (the blank one is none) and 40 text files
  const ember::Tokenizer tok(ember::resolve_tokenizer(opt.tokenizer));
  uint32_t sep = 0;
  ASSERT_TRUE(tok.document_separator(sep));
  const auto train = all_tokens(opt.out_dir, "train"), val = all_tokens(opt.out_dir, "val");
  EXPECT_EQ(int64_t(train.size()), s.train_tokens);
  EXPECT_EQ(std::count(train.begin(), train.end(), sep) + std::count(val.begin(), val.end(), sep), 42);
  // Documents decode back to their text, in order, between separators.
  std::string text;
  std::vector<uint32_t> doc;
  std::vector<uint32_t> both = train;
  both.insert(both.end(), val.begin(), val.end());
  for (const uint32_t t : both) {
    if (t != sep) {
      doc.push_back(t);
      continue;
    }
    text += tok.decode(doc) + "|";
    doc.clear();
  }
  for (const char* want : {"|doc 0 the quick\n|", "|doc 39 the quick\n|", "|the fox|", "|lazy dog|"})
    EXPECT_NE(("|" + text).find(want), std::string::npos) << want;
  const auto manifest = nlohmann::json::parse(ember::read_text_file(opt.out_dir / "manifest.json"));
  EXPECT_EQ(manifest["tokenizer_sha256"], tok.hash());
  EXPECT_EQ(manifest["sources"].size(), 41u);
  const auto counts =
      nlohmann::json::parse(ember::read_text_file(opt.out_dir / "train_token_counts.json")).get<std::vector<int64_t>>();
  EXPECT_EQ(counts.size(), size_t(tok.vocab_size()));
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), int64_t(0)), s.train_tokens);
  EXPECT_FALSE(fs::exists(opt.out_dir / ".incomplete"));
  // Deterministic: a second run (with one thread) writes identical shards.
  opt.out_dir = d / "again";
  opt.threads = 1;
  ember::prepare_text(opt);
  EXPECT_EQ(all_tokens(opt.out_dir, "train"), train);
  EXPECT_EQ(all_tokens(opt.out_dir, "val"), val);
}

TEST(PrepareText, BadJsonlNamesFileAndLine) {
  const fs::path d = text_scratch("bad");
  ember::TextPrepareOptions opt;
  opt.tokenizer = small_tokenizer(d);
  opt.out_dir = d / "out";
  opt.progress = false;
  std::ofstream(d / "a.jsonl") << "{\"text\": \"ok\"}\n{\"text\": 3}\n";
  opt.inputs = {(d / "a.jsonl").string()};
  try {
    ember::prepare_text(opt);
    FAIL() << "expected DataError";
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("a.jsonl:2: expected a JSON object with a string field 'text'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(opt.out_dir / "manifest.json"));  // nothing looks complete
  std::ofstream(d / "b.jsonl") << "{\"text\": \"ok\"}\n{broken\n";
  opt.inputs = {(d / "b.jsonl").string()};
  EXPECT_THROW(ember::prepare_text(opt), ember::DataError);
  opt.inputs = {(d / "missing.txt").string()};
  EXPECT_THROW(ember::prepare_text(opt), ember::DataError);
}

TEST(PrepareText, HtmlToText) {
  const std::string html =
      "<html><head><title>T</title><style>p{}</style></head><body><h1>Title</h1>"
      "<p>One &amp; two&nbsp;&lt;three&gt; &#8212; &#x263A;</p><script>var "
      "x;</script><ul><li>a</li><li>b</li></ul></body></html>";
  EXPECT_EQ(ember::html_to_text(html), "Title\n\nOne & two <three> \u2014 \u263A\n\na\n\nb\n");
  // <header> is not <head>, and an upper-case <SCRIPT> ends at its upper-case </SCRIPT>: neither
  // swallows the rest of the page.
  EXPECT_EQ(ember::html_to_text("<body><header>Site</header><SCRIPT>x</SCRIPT><p>Kept</p></body>"), "Site\n\nKept\n");
}
