// Shard format, shard resolution, and the resumable deterministic loader.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <thread>

#include "ember/data/batch_prefetcher.h"
#include "ember/data/byte_tokens.h"
#include "ember/data/loader.h"
#include "ember/data/shard.h"
#include "ember/data/shard_writer.h"
#include "ember/data/text_encoder.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace fs = std::filesystem;
using ember::BatchLoader;
using ember::LoaderOptions;

namespace {

fs::path scratch_dir(const std::string& name) { return ember::testing::scratch_dir("data", name); }

std::vector<uint32_t> iota_tokens(size_t n, uint32_t start = 0) {
  std::vector<uint32_t> t(n);
  std::iota(t.begin(), t.end(), start);
  return t;
}

// Rank 0 and rank 1 of a 2-rank loader (batch 2 each) over one shard of `tokens` in `dir`.
std::pair<std::unique_ptr<BatchLoader>, std::unique_ptr<BatchLoader>> two_ranks(const fs::path& dir,
                                                                                const std::vector<uint32_t>& tokens,
                                                                                int64_t seq_len, uint64_t seed) {
  ember::write_shard(dir / "a.bin", tokens);
  LoaderOptions o;
  o.batch = 2, o.seq_len = seq_len, o.seed = seed, o.world = 2;
  o.rank = 0;
  auto r0 = std::make_unique<BatchLoader>(std::vector<fs::path>{dir / "a.bin"}, o);
  o.rank = 1;
  return {std::move(r0), std::make_unique<BatchLoader>(std::vector<fs::path>{dir / "a.bin"}, o)};
}

}  // namespace

TEST(Shard, WritesUint16WhenItFitsAndUint32Otherwise) {
  auto d = scratch_dir("widths");
  ember::write_shard(d / "a.bin", {1, 2, 65535});
  ember::write_shard(d / "b.bin", {1, 70000});
  ember::ShardFile a(d / "a.bin"), b(d / "b.bin");
  EXPECT_EQ(a.bytes_per_token(), 2);
  EXPECT_EQ(b.bytes_per_token(), 4);
  EXPECT_EQ(a.size(), 3);
  EXPECT_EQ(a.token(2), 65535u);
  EXPECT_EQ(b.token(1), 70000u);
  EXPECT_EQ(b.max_token(), 70000u);
  EXPECT_EQ(fs::file_size(d / "a.bin"), 1024u + 6u);
}

TEST(Shard, ReadsTheLlmcHeaderLayout) {
  // Build a file by hand the way llm.c does: 256 int32 header, magic/version/count, uint16 tokens.
  auto d = scratch_dir("llmc");
  int32_t header[256] = {20240520, 1, 4};
  uint16_t toks[4] = {10, 20, 30, 40};
  std::ofstream f(d / "x.bin", std::ios::binary);
  f.write(reinterpret_cast<char*>(header), sizeof(header));
  f.write(reinterpret_cast<char*>(toks), sizeof(toks));
  f.close();
  ember::ShardFile s(d / "x.bin");
  int64_t out[4];
  s.copy(0, 4, out);
  EXPECT_EQ(out[3], 40);
}

TEST(Shard, BadMagicAndTruncationNameTheFile) {
  auto d = scratch_dir("bad");
  std::ofstream(d / "magic.bin", std::ios::binary) << std::string(2000, 'x');
  try {
    ember::ShardFile s(d / "magic.bin");
    FAIL();
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("magic.bin' has bad magic"), std::string::npos) << e.what();
  }
  ember::write_shard(d / "t.bin", iota_tokens(100));
  fs::resize_file(d / "t.bin", fs::file_size(d / "t.bin") - 10);
  try {
    ember::ShardFile s(d / "t.bin");
    FAIL();
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TEST(Shard, ResolveFilesDirectoriesAndGlobs) {
  auto d = scratch_dir("resolve");
  for (auto n : {"train_0.bin", "train_1.bin", "val_0.bin"}) ember::write_shard(d / n, {1, 2});
  EXPECT_EQ(ember::resolve_shards({d.string()}, "k").size(), 3u);
  EXPECT_EQ(ember::resolve_shards({(d / "train_*.bin").string()}, "k").size(), 2u);
  try {
    ember::resolve_shards({(d / "nope_*.bin").string()}, "data.train");
    FAIL();
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("data.train: '"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("matches no shard file"), std::string::npos);
  }
}

TEST(Loader, WindowsAreShiftedPairsFromTheShards) {
  auto d = scratch_dir("windows");
  ember::write_shard(d / "a.bin", iota_tokens(41));
  LoaderOptions o;
  o.batch = 2, o.seq_len = 8, o.shuffle = false;
  BatchLoader loader({d / "a.bin"}, o);
  EXPECT_EQ(loader.windows_per_epoch(), 5);  // offsets 0, 8, 16, 24, 32 (+9 <= 41)
  auto b = loader.next();
  EXPECT_EQ(b.sizes(), (std::vector<int64_t>{2, 9}));
  EXPECT_EQ(b[0][0].item<int64_t>(), 0);
  EXPECT_EQ(b[0][8].item<int64_t>(), 8);
  EXPECT_EQ(b[1][0].item<int64_t>(), 8);
}

TEST(Loader, DeterministicForASeedAndDifferentAcrossSeeds) {
  auto d = scratch_dir("det");
  ember::write_shard(d / "a.bin", iota_tokens(5000));
  LoaderOptions o;
  o.batch = 4, o.seq_len = 16, o.seed = 7;
  BatchLoader a({d / "a.bin"}, o), b({d / "a.bin"}, o);
  o.seed = 8;
  BatchLoader c({d / "a.bin"}, o);
  auto x = a.next(), y = b.next(), z = c.next();
  EXPECT_TRUE(torch::equal(x, y));
  EXPECT_FALSE(torch::equal(x, z));
}

TEST(Loader, RestoredStateReplaysExactlyTheSameBatchesAcrossEpochs) {
  auto d = scratch_dir("resume");
  ember::write_shard(d / "a.bin", iota_tokens(700));
  ember::write_shard(d / "b.bin", iota_tokens(500, 1000));
  LoaderOptions o;
  o.batch = 3, o.seq_len = 10, o.seed = 3;
  BatchLoader a({d / "a.bin", d / "b.bin"}, o);
  for (int i = 0; i < 30; ++i) a.next();  // 90 windows: past the first epoch of 118
  auto saved = ember::LoaderState::from_json(a.state().to_json());
  std::vector<at::Tensor> expect;
  for (int i = 0; i < 25; ++i) expect.push_back(a.next());  // crosses into epoch 1
  EXPECT_EQ(a.state().epoch, 1);
  BatchLoader b({d / "a.bin", d / "b.bin"}, o);
  b.restore(saved);
  for (int i = 0; i < 25; ++i) EXPECT_TRUE(torch::equal(b.next(), expect[i])) << i;
}

TEST(Loader, EveryWindowOnceperEpochAndRanksSplitTheGlobalBatch) {
  auto [r0, r1] = two_ranks(scratch_dir("ranks"), iota_tokens(2 * 40 + 1), 2, 1);
  std::set<int64_t> starts;
  for (int step = 0; step < 10; ++step) {  // 10 steps x 2 ranks x 2 = 40 windows = one epoch
    auto a = r0->next(), b = r1->next();
    for (auto t : {a, b})
      for (int64_t row = 0; row < 2; ++row) starts.insert(t[row][0].item<int64_t>());
  }
  EXPECT_EQ(starts.size(), 40u);
}

// An evaluation pass: 9 windows, steps of 2 x 2 ranks: 4 + 4 + 1, every window once, the last
// step's one window on rank 0 and none on rank 1, and no wrapping into the next epoch.
TEST(Loader, NextInEpochSplitsTheLastShortStepAndNeverWraps) {
  auto [r0, r1] = two_ranks(scratch_dir("in_epoch"), iota_tokens(3 * 9 + 1), 3, 4);
  std::multiset<int64_t> starts;
  std::vector<int64_t> rows0, rows1;
  for (int step = 0; step < 3; ++step) {
    auto a = r0->next_in_epoch(), b = r1->next_in_epoch();
    rows0.push_back(a.size(0)), rows1.push_back(b.size(0));
    for (auto t : {a, b})
      for (int64_t row = 0; row < t.size(0); ++row) starts.insert(t[row][0].item<int64_t>());
  }
  EXPECT_EQ(rows0, (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(rows1, (std::vector<int64_t>{2, 2, 0}));
  EXPECT_EQ(starts, (std::multiset<int64_t>{0, 3, 6, 9, 12, 15, 18, 21, 24}));
  EXPECT_EQ(r0->next_in_epoch().size(0), 0);  // the epoch is spent: nothing more, no wrap
  EXPECT_EQ(r0->state().epoch, 0);
}

TEST(Loader, TooLittleDataIsAClearError) {
  auto d = scratch_dir("small");
  ember::write_shard(d / "a.bin", iota_tokens(5));
  LoaderOptions o;
  o.seq_len = 16;
  try {
    BatchLoader l({d / "a.bin"}, o);
    FAIL();
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("too few for one window"), std::string::npos) << e.what();
  }
}

TEST(ByteTokens, BytesAreIdsAndNulBecomesASpaceBecauseZeroSeparatesDocuments) {
  const std::string text("a\0b\xff", 4);
  EXPECT_EQ(ember::byte_tokens(text), (std::vector<uint32_t>{'a', ' ', 'b', 255}));
  EXPECT_EQ(ember::TextEncoder::bytes().encode(text), ember::byte_tokens(text));
}

TEST(ShardWriter, SplitsIntoNumberedShardsCountsIdsAndRejectsIdsOutsideTheVocabulary) {
  auto d = scratch_dir("writer");
  ember::ShardWriter w(d, "train", 4, 10);
  w.add({1, 2, 3}, "doc a");
  w.add({3, 3}, "doc b");  // the 4th token fills train_00000.bin; the 5th starts the next shard
  w.add({9}, "doc c");
  w.flush();
  EXPECT_EQ(w.written(), (std::vector<std::string>{"train_00000.bin", "train_00001.bin"}));
  EXPECT_EQ(w.total(), 6);
  EXPECT_EQ(w.counts()[3], 3);
  EXPECT_EQ(w.counts()[9], 1);
  const ember::ShardFile first(d / "train_00000.bin"), second(d / "train_00001.bin");
  EXPECT_EQ(first.size(), 4);  // exactly max_tokens, as llm.c's shards
  EXPECT_EQ(second.size(), 2);
  EXPECT_EQ(second.token(0), 3u);
  EXPECT_EQ(second.token(1), 9u);
  try {
    w.add({10}, "doc d");
    FAIL() << "id 10 accepted with V = 10";
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("doc d: token id 10 >= vocabulary size 10"), std::string::npos) << e.what();
  }
}

TEST(Loader, OpenLoaderNamesTheKeyAndTheIdThatDoesNotFit) {
  auto d = scratch_dir("open");
  ember::write_shard(d / "a.bin", iota_tokens(100));
  LoaderOptions o;
  o.batch = 2, o.seq_len = 4;
  EXPECT_NO_THROW(ember::open_loader({(d / "a.bin").string()}, "data.train", o, 100));
  try {
    ember::open_loader({(d / "a.bin").string()}, "data.val", o, 99);
    FAIL() << "id 99 accepted with V = 99";
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("data.val: token id 99 does not fit model.vocab_size = 99"), std::string::npos)
        << e.what();
  }
}

TEST(Loader, SavesAndRestoresItselfAsACheckpointComponent) {
  auto d = scratch_dir("component");
  ember::write_shard(d / "a.bin", iota_tokens(1000));
  LoaderOptions o;
  o.batch = 3, o.seq_len = 7, o.seed = 9;
  BatchLoader a({d / "a.bin"}, o), b({d / "a.bin"}, o);
  for (int i = 0; i < 5; ++i) a.next();
  b.load_state(a.save_state(), "test");
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(torch::equal(a.next(), b.next())) << i;  // across epochs too
  ember::ComponentState bad;
  bad.json = {{"epoch", 0}, {"cursor", 100000}};
  EXPECT_THROW(b.load_state(bad, "test"), ember::CheckpointError);
}

TEST(Prefetch, HandsOutTheLoadersBatchesInOrderAtEveryDepth) {
  auto d = scratch_dir("prefetch_order");
  ember::write_shard(d / "a.bin", iota_tokens(900));
  LoaderOptions o;
  o.batch = 3, o.seq_len = 11, o.seed = 4;
  BatchLoader plain({d / "a.bin"}, o);
  std::vector<at::Tensor> expect;
  for (int i = 0; i < 70; ++i) expect.push_back(plain.next());  // 210 windows: about three epochs
  for (int64_t depth : {0, 1, 3, 64}) {
    BatchLoader loader({d / "a.bin"}, o);
    ember::BatchPrefetcher ahead(loader, depth, false);
    for (int i = 0; i < 70; ++i) ASSERT_TRUE(torch::equal(ahead.next(), expect[i])) << "depth " << depth << " batch " << i;
  }
}

TEST(Prefetch, SavesTheConsumersPositionNotTheReadersAndResumesFromIt) {
  auto d = scratch_dir("prefetch_resume");
  ember::write_shard(d / "a.bin", iota_tokens(1000));
  LoaderOptions o;
  o.batch = 2, o.seq_len = 9, o.seed = 5;
  BatchLoader plain({d / "a.bin"}, o);
  for (int i = 0; i < 7; ++i) plain.next();
  BatchLoader loader({d / "a.bin"}, o);
  ember::BatchPrefetcher ahead(loader, 4, false);
  for (int i = 0; i < 7; ++i) ahead.next();
  // Whatever the thread has read meanwhile, the state is the one after the 7 batches handed out.
  for (int wait = 0; wait < 2000 && ahead.read_ahead() < 4; ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(ahead.read_ahead(), 4);  // it did read ahead
  const auto saved = ahead.save_state();
  EXPECT_EQ(saved.json, plain.save_state().json);
  BatchLoader again({d / "a.bin"}, o);
  ember::BatchPrefetcher resumed(again, 2, false);
  resumed.load_state(saved, "test");
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(torch::equal(resumed.next(), plain.next())) << i;
  // Loading into a prefetcher that has read ahead drops what it read.
  ahead.load_state(saved, "test");
  BatchLoader check({d / "a.bin"}, o);
  check.load_state(saved, "test");
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(torch::equal(ahead.next(), check.next())) << i;
  // A state the data cannot hold is refused, and the batch handed out next is the one before it.
  ember::ComponentState bad;
  bad.json = {{"epoch", 0}, {"cursor", 100000}};
  EXPECT_THROW(ahead.load_state(bad, "test"), ember::CheckpointError);
  ASSERT_TRUE(torch::equal(ahead.next(), check.next()));
}

TEST(TextEncoder, TextInputsBecomeShardsThroughTheEncoderAndShardsPassThrough) {
  auto d = scratch_dir("text_inputs");
  ember::write_shard(d / "s.bin", iota_tokens(50));
  const auto text = ember::testing::write_text(d, "notes.txt", std::string("hi\0!", 4));
  int asked = 0;
  auto encoder = [&] {
    ++asked;
    return ember::TextEncoder::bytes();
  };
  auto only_shards = ember::encode_text_inputs({(d / "s.bin").string()}, encoder, d / "scratch");
  EXPECT_EQ(only_shards, (std::vector<std::string>{(d / "s.bin").string()}));
  EXPECT_EQ(asked, 0);  // no text: the encoder (which may need a tokenizer) is never built
  auto mixed = ember::encode_text_inputs({text.string(), (d / "s.bin").string()}, encoder, d / "scratch");
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_EQ(asked, 1);
  ember::ShardFile shard(mixed[0]);
  ASSERT_EQ(shard.size(), 4);
  EXPECT_EQ(shard.token(1), uint32_t{'i'});
  EXPECT_EQ(shard.token(2), uint32_t{' '});  // the same NUL mapping as `prepare bytes`
  EXPECT_EQ(mixed[1], (d / "s.bin").string());
}

TEST(TextEncoder, ManifestsNameTheirTokenizerOrSayWhatIsMissing) {
  auto d = scratch_dir("manifest");
  ember::testing::write_text(d, "manifest.json", R"({"tokenizer": "bytes", "vocab_size": 256})");
  EXPECT_EQ(ember::manifest_encoder(d / "manifest.json").name(), "bytes");
  ember::testing::write_text(d, "manifest.json", R"({"tokenizer": "x", "tokenizer_spec": "gone/x.tiktoken"})");
  try {
    ember::manifest_encoder(d / "manifest.json");
    FAIL() << "a missing tokenizer was accepted";
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer 'gone/x.tiktoken', which is not found"), std::string::npos)
        << e.what();
  }
  ember::write_shard(d / "train_00000.bin", iota_tokens(10));
  ember::testing::write_text(d, "manifest.json", R"({"tokenizer": "bytes"})");
  EXPECT_EQ(ember::dataset_encoder({(d / "train_00000.bin").string()}, "data.train").name(), "bytes");
  fs::remove(d / "manifest.json");
  try {
    ember::dataset_encoder({(d / "train_00000.bin").string()}, "data.train");
    FAIL() << "shards without a manifest were given a tokenizer";
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("data.train: no manifest.json beside"), std::string::npos) << e.what();
  }
}
