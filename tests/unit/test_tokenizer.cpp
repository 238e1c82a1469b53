// Tokenizer engine: conformance with the published encodings (TestPlans.txt, read from
// $EMBER_TOKENIZER_DATA = third_party/tokenizers), round trips on arbitrary bytes, BPE training.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "ember/data/bpe_trainer.h"
#include "ember/data/pretokenizer.h"
#include "ember/data/tokenizer.h"
#include "ember/data/tokenizer_presets.h"
#include "ember/util/error.h"

namespace fs = std::filesystem;
using ember::Tokenizer;
using ember::TokenizerSpec;

namespace {

fs::path data_dir() {
  const char* d = std::getenv("EMBER_TOKENIZER_DATA");
  if (d && *d) return d;
#ifdef EMBER_TOKENIZER_DATA_DEFAULT
  return EMBER_TOKENIZER_DATA_DEFAULT;
#else
  return {};
#endif
}

// The data ships in third_party/tokenizers: a missing folder or file fails the test, never skips.
::testing::AssertionResult tokenizer_data_present() {
  const fs::path d = data_dir();
  if (d.empty())
    return ::testing::AssertionFailure()
           << "EMBER_TOKENIZER_DATA is not set (tests/CMakeLists.txt points it at third_party/tokenizers)";
  if (!fs::is_directory(d))
    return ::testing::AssertionFailure() << "tokenizer data folder " << d
                                         << " is missing (it ships in the repo as third_party/tokenizers)";
  for (const char* f : {"encodings.json", "TestPlans.txt", "r50k_base.tiktoken", "p50k_base.tiktoken",
                        "cl100k_base.tiktoken", "o200k_base.tiktoken", "llama3.tiktoken"}) {
    if (!fs::is_regular_file(d / f) || fs::file_size(d / f) == 0)
      return ::testing::AssertionFailure()
             << "tokenizer data file " << (d / f) << " is missing or empty (it ships in third_party/tokenizers)";
  }
  return ::testing::AssertionSuccess();
}

#define REQUIRE_TOKENIZER_DATA() ASSERT_TRUE(tokenizer_data_present())

nlohmann::json encodings() {
  std::ifstream in(data_dir() / "encodings.json");
  return nlohmann::json::parse(in);
}

// The spec of an encoding as the data folder describes it (independent of the built-in presets).
TokenizerSpec spec_from_data(const std::string& name) {
  const auto j = encodings().at(name == "p50k_edit" ? "p50k_base" : name);
  TokenizerSpec s;
  s.name = name;
  s.ranks_file = data_dir() / ((name == "p50k_edit" ? "p50k_base" : name) + ".tiktoken");
  s.pattern = j.at("pat_str").get<std::string>();
  for (const auto& [k, v] : j.at("special_tokens").items()) s.specials[k] = v.get<uint32_t>();
  if (j.at("n_vocab").is_number()) s.n_vocab = j.at("n_vocab").get<int64_t>();
  return s;
}

const Tokenizer& cached(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& t = cache[name];
  if (!t) t = std::make_unique<Tokenizer>(spec_from_data(name));
  return *t;
}

struct PlanCase {
  std::string encoding, sample;
  std::vector<uint32_t> ids;
};

// TestPlans.txt: "EncodingName: X" / "Sample: text..." (may span lines) / "Encoded: [ids]".
std::vector<PlanCase> read_plans() {
  std::ifstream in(data_dir() / "TestPlans.txt");
  std::vector<PlanCase> plans;
  std::string line;
  PlanCase cur;
  bool in_sample = false;
  while (std::getline(in, line)) {
    if (line.rfind("EncodingName: ", 0) == 0) {
      cur = PlanCase{line.substr(14), "", {}};
    } else if (line.rfind("Sample: ", 0) == 0 || line == "Sample:") {
      cur.sample = line.size() > 8 ? line.substr(8) : "";
      in_sample = true;
    } else if (line.rfind("Encoded: ", 0) == 0) {
      in_sample = false;
      cur.ids = nlohmann::json::parse(line.substr(9)).get<std::vector<uint32_t>>();
      plans.push_back(cur);
    } else if (in_sample) {
      cur.sample += "\n" + line;
    }
  }
  return plans;
}

}  // namespace

TEST(Tokenizer, TestPlansConformance) {
  REQUIRE_TOKENIZER_DATA();
  const auto plans = read_plans();
  ASSERT_EQ(plans.size(), 313u);
  int failures = 0;
  for (const auto& p : plans) {
    const auto& tok = cached(p.encoding);
    const auto ids = tok.encode(p.sample);
    if (ids != p.ids && ++failures <= 5) ADD_FAILURE() << p.encoding << " sample: " << p.sample;
    EXPECT_EQ(tok.decode(ids), p.sample);
  }
  EXPECT_EQ(failures, 0);
}

TEST(Tokenizer, PresetsMatchPublishedEncodings) {
  REQUIRE_TOKENIZER_DATA();
  setenv("EMBER_TOKENIZER_DIR", data_dir().c_str(), 1);
  for (const auto& name : ember::tokenizer_preset_names()) {
    const auto preset = ember::tokenizer_preset(name);
    const auto data = spec_from_data(name);
    EXPECT_EQ(preset.pattern, data.pattern) << name;
    EXPECT_EQ(preset.specials, data.specials) << name;
    Tokenizer t(preset);  // same stack slot each iteration: the piece cache must not carry over
    if (data.n_vocab) {
      EXPECT_EQ(t.vocab_size(), data.n_vocab) << name;
    }
    EXPECT_EQ(t.encode(" indivisibility unbelievable"), cached(name).encode(" indivisibility unbelievable")) << name;
  }
  unsetenv("EMBER_TOKENIZER_DIR");
}

TEST(Tokenizer, Llama3Samples) {
  REQUIRE_TOKENIZER_DATA();
  const auto& t = cached("llama3");
  EXPECT_EQ(t.vocab_size(), 128256);
  // Llama 3 shares cl100k's regex; ids checked against the reference implementation.
  EXPECT_EQ(t.encode("Hello, world!"), (std::vector<uint32_t>{9906, 11, 1917, 0}));
  EXPECT_EQ(t.encode("This is a test sentence."), (std::vector<uint32_t>{2028, 374, 264, 1296, 11914, 13}));
  EXPECT_EQ(t.encode_with_specials("<|begin_of_text|>hi<|eot_id|>"), (std::vector<uint32_t>{128000, 6151, 128009}));
  EXPECT_EQ(t.decode({128000, 6151, 128009}), "<|begin_of_text|>hi<|eot_id|>");
  EXPECT_EQ(t.encode_with_specials("<|eot_id|><|eot_id|>hi<|begin_of_text|><|eot_id|>"),
            (std::vector<uint32_t>{128009, 128009, 6151, 128000, 128009}));
  EXPECT_EQ(t.encode_with_specials("no specials"), t.encode("no specials"));
  uint32_t sep = 0;
  ASSERT_TRUE(t.document_separator(sep));
  EXPECT_EQ(sep, 128001u);
}

TEST(Tokenizer, RoundTripsArbitraryBytes) {
  REQUIRE_TOKENIZER_DATA();
  std::mt19937 rng(7);
  const std::vector<std::string> tricky = {"\xff\xfe",
                                           "a\x80"
                                           "b",
                                           "\xed\xa0\x80",
                                           "\xc0\xaf",
                                           "\xf4\x90\x80\x80",
                                           "caf\xc3",
                                           "\xe2\x82",
                                           std::string("x\0y", 3),
                                           "  \n\t \r\n   "};
  for (const std::string name : {"r50k_base", "cl100k_base", "o200k_base"}) {
    const auto& t = cached(name);
    for (const auto& s : tricky) EXPECT_EQ(t.decode(t.encode(s)), s) << name;
    for (int trial = 0; trial < 200; ++trial) {
      std::string s(rng() % 64, '\0');
      for (auto& c : s) c = static_cast<char>(rng() % 256);
      ASSERT_EQ(t.decode(t.encode(s)), s) << name << " trial " << trial;
    }
  }
}

TEST(Tokenizer, ErrorsNameTheProblem) {
  REQUIRE_TOKENIZER_DATA();
  EXPECT_THROW(cached("r50k_base").decode({50257}), ember::DataError);
  const fs::path bad = fs::temp_directory_path() / "ember_bad_ranks.tiktoken";
  std::ofstream(bad) << "IQ== 0\nnot-base64!! 1\n";
  try {
    TokenizerSpec s{"bad", bad, ember::kGpt2Pattern, {}, 0};
    Tokenizer t(s);
    FAIL() << "expected DataError";
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("ember_bad_ranks.tiktoken:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ember::PreTokenizer("(unclosed"), ember::Error);
  EXPECT_THROW(ember::resolve_tokenizer("no_such_preset"), ember::UsageError);
}

// Found by fuzz_tiktoken_ranks (tests/fuzz/corpus/tiktoken_ranks/crash-*): a few lines with a rank near
// 2^32 made the rank-indexed table ask for 64 GB. Every byte has a rank here, so only the gap is wrong.
TEST(Tokenizer, SparseRanksAreRefusedBeforeTheTableIsAllocated) {
  const fs::path file = fs::temp_directory_path() / "ember_sparse_ranks.tiktoken";
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  ember::write_rank_file(file, bytes);
  std::ofstream(file, std::ios::app) << "YWI= 4294967000\n";  // base64("ab")
  try {
    Tokenizer t(TokenizerSpec{"sparse", file, ember::kGpt2Pattern, {}, 0});
    FAIL() << "expected DataError";
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("ember_sparse_ranks.tiktoken: ranks run to 4294967000 for 257 tokens"),
              std::string::npos) << e.what();
  }
  ember::write_rank_file(file, bytes);
  std::ofstream(file, std::ios::app) << "YWI= 300\n";  // a few gaps are fine
  EXPECT_EQ(Tokenizer(TokenizerSpec{"gaps", file, ember::kGpt2Pattern, {}, 0}).vocab_size(), 301);
}

TEST(BpeTrainer, DeterministicAndRoundTrips) {
  std::vector<std::string> texts;
  std::mt19937 rng(3);
  const std::vector<std::string> words = {"the", "token", "tokenizer", "merge", "pair", "rank", "é", "日本"};
  for (int d = 0; d < 50; ++d) {
    std::string t;
    for (int w = 0; w < 200; ++w) t += words[rng() % words.size()] + (rng() % 7 ? " " : ",\n");
    texts.push_back(t);
  }
  ember::BpeTrainOptions opt;
  opt.vocab_size = 280;
  const auto a = ember::train_bpe_on_text(texts, opt), b = ember::train_bpe_on_text(texts, opt);
  ASSERT_EQ(a.tokens, b.tokens);
  ASSERT_EQ(a.tokens.size(), 279u);
  const fs::path file = fs::temp_directory_path() / "ember_trained_test.tiktoken";
  ember::save_trained_tokenizer(a, file);
  Tokenizer t(ember::resolve_tokenizer(file.string()));
  EXPECT_EQ(t.vocab_size(), 280);
  const auto ids = t.encode(texts[0]);
  EXPECT_LT(ids.size(), texts[0].size() / 2);  // frequent words became single tokens
  EXPECT_EQ(t.decode(ids), texts[0]);
  EXPECT_EQ(t.encode(" token").size(), 1u);
}

namespace {
// BPE training by brute force: every round recounts all adjacent pairs of every pre-token (weighted
// by its count), merges the most frequent (ties: the smallest (left id, right id)) left to right
// without overlap, and appends its bytes as the next rank.
std::vector<std::string> naive_bpe(const std::vector<std::string>& texts, size_t ranks) {
  ember::PreTokenizer pre(ember::kGpt2Pattern);
  std::map<std::string, int64_t> pieces;
  for (const auto& t : texts) pre.split(t, [&](std::string_view p) { ++pieces[std::string(p)]; });
  std::vector<std::pair<std::vector<uint32_t>, int64_t>> words;
  for (const auto& [piece, count] : pieces) words.push_back({std::vector<uint32_t>(piece.begin(), piece.end()), count});
  for (auto& [ids, count] : words)  // bytes as unsigned ids
    for (auto& id : ids) id &= 0xffu;
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  while (tokens.size() < ranks) {
    std::map<std::pair<uint32_t, uint32_t>, int64_t> counts;
    for (const auto& [ids, count] : words)
      for (size_t i = 0; i + 1 < ids.size(); ++i) counts[{ids[i], ids[i + 1]}] += count;
    if (counts.empty()) break;
    auto best = counts.begin();  // the map is ordered by pair: the first maximum is the smallest pair
    for (auto it = counts.begin(); it != counts.end(); ++it)
      if (it->second > best->second) best = it;
    const auto [a, b] = best->first;
    const auto id = static_cast<uint32_t>(tokens.size());
    tokens.push_back(tokens[a] + tokens[b]);
    for (auto& [ids, count] : words) {
      std::vector<uint32_t> merged;
      for (size_t i = 0; i < ids.size(); ++i) {
        const bool hit = i + 1 < ids.size() && ids[i] == a && ids[i + 1] == b;
        merged.push_back(hit ? id : ids[i]);
        i += hit ? 1 : 0;
      }
      ids = std::move(merged);
    }
  }
  return tokens;
}
}  // namespace

// The trainer's incremental pair counts (heap, stale entries, touched pairs) give the merges of
// the brute-force trainer above, rank for rank, on text with runs (aaaa: non-overlapping merges),
// ties and multi-byte characters, also where the pairs run out.
TEST(BpeTrainer, MergesEqualABruteForceTrainer) {
  std::vector<std::string> texts;
  std::mt19937 rng(7);
  const std::vector<std::string> words = {"aaaa", "aaa", "abab", "ba", "banana", "bandana", "é", "éé", "日本", "x"};
  for (int d = 0; d < 20; ++d) {
    std::string t;
    for (int w = 0; w < 60; ++w) t += words[rng() % words.size()] + (rng() % 5 ? " " : "\n");
    texts.push_back(t);
  }
  for (size_t merges : {28, 60}) {  // 60: the corpus runs out of pairs after 31 merges, both stop there
    ember::BpeTrainOptions opt;
    opt.vocab_size = static_cast<int64_t>(257 + merges);
    const auto want = naive_bpe(texts, 256 + merges);
    ASSERT_EQ(want.size(), 256 + std::min<size_t>(merges, 31));
    EXPECT_EQ(ember::train_bpe_on_text(texts, opt).tokens, want) << merges << " merges";
  }
}
