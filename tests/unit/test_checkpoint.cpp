// Checkpoints: layout, checksums, keep-K, latest pointer, corruption detection and fallback.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "ember/train/checkpoint.h"
#include "ember/train/metrics_log.h"
#include "ember/train/train_state.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace fs = std::filesystem;

namespace {

fs::path fresh_run(const std::string& name) {
  fs::path d = fs::temp_directory_path() / "ember_ckpt_test" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

ember::CheckpointData data_for(int64_t step) {
  ember::CheckpointData d;
  d.model["w"] = torch::full({4, 4}, static_cast<float>(step));
  d.optim["exp_avg/w"] = torch::zeros({4, 4});
  d.state = {{"step", step}};
  return d;
}

}  // namespace

TEST(Checkpoint, LayoutLatestPointerAndKeepK) {
  auto run = fresh_run("keep");
  ember::Checkpointer ck(run, 2);
  for (int64_t s : {10, 20, 30}) ck.save(data_for(s), s);
  auto dir = run / "checkpoints";
  EXPECT_FALSE(fs::exists(dir / "step_10"));
  EXPECT_TRUE(fs::exists(dir / "step_20"));
  for (auto f : {"model.safetensors", "optim.safetensors", "state.json", "SHA256SUMS"})
    EXPECT_TRUE(fs::exists(dir / "step_30" / f)) << f;
  EXPECT_EQ(ember::read_text_file(dir / "latest"), "step_30\n");
  auto loaded = ck.load_latest([](const std::string&) {});
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state["step"], 30);
  EXPECT_EQ(loaded->model["w"][0][0].item<float>(), 30.0f);
}

TEST(Checkpoint, TruncatedFileIsDetectedAndResumeFallsBack) {
  auto run = fresh_run("corrupt");
  ember::Checkpointer ck(run, 3);
  ck.save(data_for(1), 1);
  ck.save(data_for(2), 2);
  auto bad = run / "checkpoints" / "step_2" / "model.safetensors";
  fs::resize_file(bad, fs::file_size(bad) / 2);
  try {
    ember::load_checkpoint(run / "checkpoints" / "step_2");
    FAIL() << "corrupt checkpoint accepted";
  } catch (const ember::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("model.safetensors fails its SHA-256 checksum"), std::string::npos)
        << e.what();
  }
  std::vector<std::string> warnings;
  auto loaded = ck.load_latest([&](const std::string& w) { warnings.push_back(w); });
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state["step"], 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("step_2"), std::string::npos);
}

TEST(Checkpoint, FlippedByteAndMissingFilesAreRefused) {
  auto run = fresh_run("flip");
  ember::Checkpointer ck(run, 3);
  auto dir = ck.save(data_for(5), 5);
  {
    std::fstream f(dir / "optim.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
  }
  EXPECT_THROW(ember::verify_checkpoint(dir), ember::CheckpointError);
  fs::remove(dir / "SHA256SUMS");
  EXPECT_THROW(ember::verify_checkpoint(dir), ember::CheckpointError);
  EXPECT_FALSE(ck.load_latest([](const std::string&) {}).has_value());
}

TEST(Checkpoint, LeftoverTemporaryDirectoryIsIgnored) {
  auto run = fresh_run("tmp");
  ember::Checkpointer ck(run, 3);
  ck.save(data_for(3), 3);
  fs::create_directories(run / "checkpoints" / ".tmp_step_4");  // a save killed half-way
  std::ofstream(run / "checkpoints" / ".tmp_step_4" / "model.safetensors") << "partial";
  auto loaded = ck.load_latest([](const std::string&) {});
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state["step"], 3);
}

TEST(TrainState, JsonAndRngRoundTrip) {
  ember::TrainState s;
  s.step = 12, s.tokens_seen = 999, s.loader = {2, 17}, s.config_hash = "c", s.model_hash = "m";
  torch::manual_seed(42);
  s.rng_state = ember::cpu_rng_state_hex();
  auto a = torch::randn({3});
  ember::restore_cpu_rng_state(s.rng_state);
  EXPECT_TRUE(torch::equal(torch::randn({3}), a));
  auto back = ember::TrainState::from_json(s.to_json(), "t");
  EXPECT_EQ(back.step, 12);
  EXPECT_EQ(back.loader.epoch, 2);
  EXPECT_EQ(back.loader.cursor, 17);
  EXPECT_THROW(ember::TrainState::from_json(nlohmann::json{{"step", 1}}, "t"), ember::CheckpointError);
}

TEST(MetricsLog, TruncateAfterDropsLaterAndPartialLines) {
  auto run = fresh_run("metrics");
  {
    ember::MetricsLog log(run / "m.jsonl");
    for (int s : {10, 20, 30}) log.write({{"step", s}});
  }
  std::ofstream(run / "m.jsonl", std::ios::app) << "{\"step\": 4";  // cut by a kill -9
  ember::MetricsLog log(run / "m.jsonl");
  log.truncate_after(20);
  log.write({{"step", 21}});
  EXPECT_EQ(ember::read_text_file(run / "m.jsonl"), "{\"step\":10}\n{\"step\":20}\n{\"step\":21}\n");
}
