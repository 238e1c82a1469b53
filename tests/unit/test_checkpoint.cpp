// Checkpoints: layout, checksums, keep-K, latest pointer, corruption detection and fallback.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "ember/run/checkpoint.h"
#include "ember/run/parameters.h"
#include "ember/run/run_lock.h"
#include "ember/run/train_state.h"
#include "ember/train/metrics_log.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "scratch.h"

namespace fs = std::filesystem;

namespace {

fs::path fresh_run(const std::string& name) { return ember::testing::scratch_dir("ckpt", name); }

std::map<std::string, ember::ComponentState> data_for(int64_t step) {
  std::map<std::string, ember::ComponentState> d;
  d["model"].tensors["w"] = torch::full({4, 4}, static_cast<float>(step));
  d["optim"].tensors["exp_avg/w"] = torch::zeros({4, 4});
  d["train"].json = {{"step", step}};
  return d;
}

int64_t step_in(const ember::CheckpointData& d) { return d.component("train").json["step"].get<int64_t>(); }

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
  EXPECT_EQ(step_in(*loaded), 30);
  EXPECT_EQ(loaded->step, 30);
  EXPECT_EQ(loaded->component("model").tensors.at("w")[0][0].item<float>(), 30.0f);
  EXPECT_EQ(loaded->component("optim").tensors.count("exp_avg/w"), 1u);
  EXPECT_THROW(loaded->component("ema"), ember::CheckpointError);
  // Evaluation reads only the model's tensors.
  auto model_only = ember::load_checkpoint(dir / "step_30", {"model"});
  EXPECT_EQ(model_only.components.count("optim"), 0u);
  EXPECT_EQ(model_only.component("model").tensors.size(), 1u);
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
  EXPECT_EQ(step_in(*loaded), 1);
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
  EXPECT_EQ(step_in(*loaded), 3);
}

TEST(TrainState, JsonAndRngRoundTripAndModelHashGuard) {
  ember::TrainState s;
  s.step = 12, s.tokens_seen = 999, s.config_hash = "c", s.model_hash = "m";
  torch::manual_seed(42);
  ember::CpuRngState rng;
  auto saved_rng = rng.save_state();
  auto a = torch::randn({3});
  rng.load_state(saved_rng, "t");
  EXPECT_TRUE(torch::equal(torch::randn({3}), a));
  auto back = ember::TrainState::from_json(s.to_json(), "t");
  EXPECT_EQ(back.step, 12);
  EXPECT_EQ(back.tokens_seen, 999);
  EXPECT_THROW(ember::TrainState::from_json(nlohmann::json{{"step", 1}}, "t"), ember::CheckpointError);
  ember::TrainState other;
  other.model_hash = "another model";
  EXPECT_THROW(other.load_state(s.save_state(), "t"), ember::CheckpointError);
  other.model_hash = "m";
  other.config_hash = "new config";
  other.load_state(s.save_state(), "t");
  EXPECT_EQ(other.step, 12);
  EXPECT_EQ(other.config_hash, "new config");  // the running config's hash is kept
}

TEST(Parameters, LoadChecksNamesShapesAndDtypesAndNamesTheOffender) {
  torch::nn::Linear lin(3, 2);
  auto tensors = ember::module_tensors(*lin);
  ASSERT_EQ(tensors.size(), 2u);
  auto error_of = [&](ember::TensorMap t) {
    try {
      ember::load_parameters(*lin, t, "ckpt");
    } catch (const ember::CheckpointError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto good = tensors;
  good["weight"] = torch::ones({2, 3});
  good["bias"] = torch::zeros({2});
  EXPECT_EQ(error_of(good), "");
  EXPECT_TRUE(torch::equal(lin->weight, torch::ones({2, 3})));
  auto missing = good;
  missing.erase("bias");
  EXPECT_NE(error_of(missing).find("'bias' is missing"), std::string::npos) << error_of(missing);
  auto extra = good;
  extra["scale"] = torch::ones({1});
  EXPECT_NE(error_of(extra).find("'scale' is not a parameter"), std::string::npos) << error_of(extra);
  auto shape = good;
  shape["weight"] = torch::ones({3, 2});
  EXPECT_NE(error_of(shape).find("'weight' has shape [3, 2], the model expects [2, 3]"), std::string::npos)
      << error_of(shape);
  auto dtype = good;
  dtype["bias"] = torch::zeros({2}, torch::kDouble);
  EXPECT_NE(error_of(dtype).find("'bias' is Double, the model expects Float"), std::string::npos) << error_of(dtype);
}

TEST(Checkpoint, ComponentsSaveAndRestoreThemselves) {
  auto run = fresh_run("components");
  ember::Checkpointer ck(run, 2);
  torch::nn::Linear lin(2, 2);
  ember::ModuleState model(*lin);
  ember::TrainState train;
  train.step = 7, train.model_hash = "h";
  ember::NamedComponents parts = {{"train", &train}, {"model", &model}};
  const auto weight = lin->weight.detach().clone();
  auto dir = ck.save(ember::save_components(parts), 7);
  EXPECT_TRUE(fs::exists(dir / "model.safetensors"));
  EXPECT_FALSE(fs::exists(dir / "train.safetensors"));  // JSON only: state.json["train"]
  {
    torch::NoGradGuard ng;
    lin->weight.zero_();
  }
  train.step = 0;
  ember::restore_components(ember::load_checkpoint(dir), parts);
  EXPECT_TRUE(torch::equal(lin->weight, weight));
  EXPECT_EQ(train.step, 7);
  ember::CpuRngState rng;
  ember::NamedComponents more = {{"rng", &rng}};
  try {
    ember::restore_components(ember::load_checkpoint(dir), more);
    FAIL() << "a component the checkpoint lacks was accepted";
  } catch (const ember::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no state for 'rng'"), std::string::npos) << e.what();
  }
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

TEST(RunLock, ASecondHolderIsRefusedWithThePidAndTheLockGoesWithItsHolder) {
  auto run = fresh_run("lock");
  {
    ember::RunLock first(run);
    EXPECT_EQ(ember::read_text_file(run / ".lock"), std::to_string(::getpid()) + "\n");
    try {
      ember::RunLock second(run);  // a separate open file description: flock refuses it
      FAIL() << "a locked run directory was locked twice";
    } catch (const ember::UsageError& e) {
      EXPECT_NE(
          std::string(e.what()).find("is in use by another ember process (pid " + std::to_string(::getpid()) + ")"),
          std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW(ember::RunLock again(run));  // released when the holder went away
}
