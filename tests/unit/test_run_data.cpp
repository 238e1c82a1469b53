// Where a run's data is found from any directory (run/run_data.h): absolute paths, relative ones of
// older runs, a moved data set recognised by its manifest's sha256, and errors that say where they
// looked.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>

#include "ember/data/shard.h"
#include "ember/run/run_data.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace fs = std::filesystem;

namespace test_run_data {

// sha256 of the manifest texts below, from `printf '...\n' | sha256sum` (an independent reference).
constexpr const char* kManifest256 = "{\"tokenizer\": \"bytes\", \"vocab_size\": 256}\n";
constexpr const char* kSha256Of256 = "2b19c1e6ceedab4db02bc7e196b5103a54258e1a07866a56875e420c1df7fe58";
constexpr const char* kManifest300 = "{\"tokenizer\": \"bytes\", \"vocab_size\": 300}\n";
constexpr const char* kSha256Of300 = "9902f910bbd45810c872ecad9faa9a8388b7af44af315c348c89818550b33e81";

// A prepared-looking data set: train and val shards and a manifest.
void make_dataset(const fs::path& dir, const char* manifest = kManifest256) {
  fs::create_directories(dir);
  std::vector<uint32_t> tokens(64);
  std::iota(tokens.begin(), tokens.end(), 0u);
  ember::write_shard(dir / "train_000.bin", tokens);
  ember::write_shard(dir / "val_000.bin", tokens);
  if (manifest) ember::testing::write_text(dir, "manifest.json", manifest);
}

ember::DataConfig data_in(const fs::path& dir) {
  ember::DataConfig d;
  d.train = {(dir / "train_*.bin").string()};
  d.val = {(dir / "val_*.bin").string()};
  return d;
}

// A run directory trained on `data`: its data.json as the trainer writes it.
fs::path make_run(const fs::path& root, const ember::DataConfig& data) {
  const fs::path run = root / "runs" / "tiny";
  fs::create_directories(run);
  ember::write_run_data(run, ember::describe_run_data(data));
  return run;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ember::DataError& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_has(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

}  // namespace test_run_data

using namespace test_run_data;

TEST(RunData, AbsolutePathsAreTakenFromTheBaseAndKeepTheirPrefix) {
  ember::DataConfig d;
  d.train = {"data/x/train_*.bin", "/abs/t.bin", "nanogpt:sub/../o/train.bin"};
  d.val = {"./v"};
  const auto a = ember::absolute_data_paths(d, "/base/dir/");
  EXPECT_EQ(a.train,
            (std::vector<std::string>{"/base/dir/data/x/train_*.bin", "/abs/t.bin", "nanogpt:/base/dir/o/train.bin"}));
  EXPECT_EQ(a.val, std::vector<std::string>{"/base/dir/v"});
}

TEST(RunData, RecordHoldsTheManifestDirectoryHashAndTokenizer) {
  const auto root = ember::testing::scratch_dir("run_data", "record");
  make_dataset(root / "data");
  const fs::path run = make_run(root, data_in(root / "data"));
  const auto r = ember::read_run_data(run);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->splits.size(), 2u);
  EXPECT_EQ(r->splits.at("train").dir, root / "data");
  EXPECT_EQ(r->splits.at("train").manifest_sha256, kSha256Of256);
  EXPECT_EQ(r->splits.at("val").manifest_sha256, kSha256Of256);
  EXPECT_EQ(r->tokenizer, nlohmann::json({{"tokenizer", "bytes"}}));
  EXPECT_FALSE(ember::read_run_data(root).has_value());  // no data.json: an older run
  ember::testing::write_text(run, "data.json", "{\"train\": 3}");
  expect_has(error_of([&] { ember::read_run_data(run); }), (run / "data.json").string() + ": not a run's data record");
}

TEST(RunData, FoundAsWrittenAndTheTokenizerWithoutAnyShard) {
  const auto root = ember::testing::scratch_dir("run_data", "as_written");
  make_dataset(root / "data");
  const auto data = data_in(root / "data");
  const fs::path run = make_run(root, data);
  const ember::RunData found(run, data, "");
  EXPECT_EQ(found.train("why"), data.train);
  EXPECT_EQ(found.val("why"), data.val);
  fs::remove_all(root / "data");  // the data set is gone: the recorded tokenizer still serves
  EXPECT_EQ(found.encoder().name(), "bytes");
  ASSERT_TRUE(found.tokenizer().has_value());
  EXPECT_EQ(found.tokenizer()->identity, "bytes");
  const std::string e = error_of([&] { found.train("frequency buckets need the training shards"); });
  expect_has(e, "frequency buckets need the training shards (data.train: '" + data.train[0] + "')");
  expect_has(e, "not found as written (from '" + fs::current_path().string() + "')");
  expect_has(e, "set EMBER_DATA_DIR to the directory that holds it now");
}

TEST(RunData, RelativePathsOfAnOlderRunAreLookedForAboveTheRunDirectory) {
  const auto root = ember::testing::scratch_dir("run_data", "relative");
  make_dataset(root / "rundata_unit_set");
  const fs::path run = root / "runs" / "tiny";  // no data.json: written before it existed
  fs::create_directories(run);
  ember::DataConfig rel;
  rel.train = {"rundata_unit_set/train_*.bin"};
  rel.val = {"rundata_unit_set/val_*.bin"};
  const ember::RunData found(run, rel, "");
  EXPECT_EQ(found.train("why"), std::vector<std::string>{(root / "rundata_unit_set/train_*.bin").string()});
  fs::rename(root / "rundata_unit_set", root / "elsewhere");
  const std::string e = error_of([&] { found.val("perplexity needs the validation shards"); });
  expect_has(e, "perplexity needs the validation shards (data.val: 'rundata_unit_set/val_*.bin')");
  expect_has(e, "nor from the directories above the run: '" + (root / "runs").string() + "', '" + root.string() + "'");
  EXPECT_EQ(e.find("EMBER_DATA_DIR"), std::string::npos) << "an older run has no record to check a moved set against";
}

TEST(RunData, MovedDataSetIsAcceptedWithTheSameManifest) {
  const auto root = ember::testing::scratch_dir("run_data", "moved");
  make_dataset(root / "old");
  const auto data = data_in(root / "old");
  const fs::path run = make_run(root, data);
  fs::rename(root / "old", root / "new");
  const ember::RunData found(run, data, root / "new");
  EXPECT_EQ(found.train("why"), std::vector<std::string>{(root / "new/train_*.bin").string()});
  EXPECT_EQ(found.val("why"), std::vector<std::string>{(root / "new/val_*.bin").string()});
  const ember::RunData nowhere(run, data, root / "missing");
  expect_has(error_of([&] { nowhere.val("why"); }), "nor under EMBER_DATA_DIR '" + (root / "missing").string() + "'");
}

TEST(RunData, AnotherDataSetIsRefusedNamingBothPathsAndHashes) {
  const auto root = ember::testing::scratch_dir("run_data", "other");
  make_dataset(root / "old");
  const auto data = data_in(root / "old");
  const fs::path run = make_run(root, data);
  fs::remove_all(root / "old");
  make_dataset(root / "other", kManifest300);
  const std::string e = error_of([&] { ember::RunData(run, data, root / "other").val("why"); });
  expect_has(e, "data.val: EMBER_DATA_DIR '" + (root / "other").string() +
                    "' holds another data set (manifest sha256 " + std::string(kSha256Of300).substr(0, 12) + ")");
  expect_has(e, "'" + (root / "old").string() + "' (manifest sha256 " + std::string(kSha256Of256).substr(0, 12) + ")");
  make_dataset(root / "bare", nullptr);  // the shards without their manifest are not recognisable
  expect_has(error_of([&] { ember::RunData(run, data, root / "bare").train("why"); }),
             "'" + (root / "bare").string() + "' has no manifest.json, so it is not recognisable");
}
