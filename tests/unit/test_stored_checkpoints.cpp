// The optimizer is a checkpoint component with a scope (io/component_state.h,
// run/checkpoint_writer.h). Checkpoints written before it was one (tests/checkpoints: one process,
// two ranks, two ranks with ZeRO-1's optimizer shards; see tests/checkpoints/README.md) load into
// today's components: every moment and step count as the files hold them, whole or as a ZeRO-1
// rank's share, whatever the world size. The resume itself is cli.stored_checkpoints.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "ember/io/safetensors.h"
#include "ember/model/lm.h"
#include "ember/run/checkpoint.h"
#include "ember/run/checkpoint_writer.h"
#include "ember/run/parameters.h"
#include "ember/run/run_config.h"
#include "ember/train/adamw.h"
#include "ember/util/error.h"
#include "ember/run/train_state.h"
#include "scratch.h"

namespace fs = std::filesystem;

namespace {

fs::path stored(const std::string& run) { return fs::path(EMBER_SOURCE_DIR_DEFAULT) / "tests/checkpoints" / run; }

ember::Config run_config(const std::string& run) { return ember::load_config({(stored(run) / "config.yaml").string()}, {}); }

// Every optimizer tensor file of the stored step-4 checkpoint, read directly.
ember::TensorMap optimizer_files(const std::string& run) {
  ember::TensorMap all;
  for (const auto& e : fs::directory_iterator(stored(run) / "checkpoints/step_4"))
    if (e.path().filename().string().rfind("optim", 0) == 0) {
      auto part = ember::load_safetensors(e.path());
      all.insert(part.begin(), part.end());
    }
  return all;
}

void expect_same(const ember::TensorMap& got, const ember::TensorMap& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [name, t] : want) {
    ASSERT_TRUE(got.count(name)) << what << ": " << name << " was not loaded";
    EXPECT_TRUE(torch::equal(got.at(name), t)) << what << ": " << name;
  }
}

}  // namespace

TEST(StoredCheckpoints, TheWholeOptimizerLoadsFromOneFileOrFromZeroShards) {
  for (const std::string run : {"one", "two", "zero"}) {
    const auto cfg = run_config(run);
    ember::LanguageModel model(cfg.model);
    ember::ModuleState weights(model);
    ember::AdamW adamw(model.named_parameters().pairs(), cfg.optim);
    const auto ckpt = ember::load_checkpoint(stored(run) / "checkpoints/step_4");
    ember::restore_components(ckpt, {{"model", &weights}, {"optim", &adamw}});
    const auto files = optimizer_files(run);
    EXPECT_EQ(files.size(), 3 * model.named_parameters().size() + 1) << run;  // exp_avg, exp_avg_sq, step; __steps__
    expect_same(adamw.state_tensors(), files, run);
    EXPECT_EQ(adamw.steps(), 4) << run;
  }
}

// A ZeRO-1 rank holds the moments of its own parameters: it takes exactly those, from a whole file
// or from shards written by another number of ranks.
TEST(StoredCheckpoints, AZeroRankTakesItsShareFromEitherForm) {
  for (const std::string run : {"one", "zero"}) {
    const auto cfg = run_config(run);
    ember::LanguageModel model(cfg.model);
    auto named = model.named_parameters().pairs();
    ember::NamedParameters mine;
    for (size_t k = 0; k < named.size(); k += 3) mine.push_back(named[k]);  // not the writer's split
    ember::AdamW adamw(mine, cfg.optim, ember::StateScope::per_rank);
    ember::restore_components(ember::load_checkpoint(stored(run) / "checkpoints/step_4"), {{"optim", &adamw}});
    const auto files = optimizer_files(run);
    ember::TensorMap want{{"__steps__", files.at("__steps__")}};  // the steps taken, in every shard
    for (const auto& [name, p] : mine)
      for (const char* kind : {"exp_avg/", "exp_avg_sq/", "step/"}) want[kind + name] = files.at(kind + name);
    expect_same(adamw.state_tensors(), want, run);
  }
}

namespace {

// A component whose state is a rank's own: one tensor named after the rank.
struct RankPart final : ember::Stateful {
  int rank = 0;
  ember::TensorMap loaded;
  ember::StateScope scope() const override { return ember::StateScope::per_rank; }
  ember::ComponentState save_state() const override {
    return {{{"part/" + std::to_string(rank), torch::full({2}, static_cast<double>(rank))}}, nullptr};
  }
  void load_state(const ember::ComponentState& s, const std::string&) override { loaded = s.tensors; }
};

}  // namespace

// One process writes its per-rank component as shard 0 beside the shared ones, and the load merges
// the shards; a checkpoint without any form of a component names it.
TEST(StoredCheckpoints, APerRankComponentIsWrittenAsShardsAndMergedOnLoad) {
  ember::Checkpointer checkpointer(ember::testing::scratch_dir("stored_checkpoints", "per_rank"), 2);
  RankPart part;
  ember::TrainState state;
  const auto dir = ember::write_checkpoint(checkpointer, {{"train", &state}, {"part", &part}}, 3, {});
  EXPECT_TRUE(fs::exists(dir / "part_shard_0.safetensors"));
  EXPECT_FALSE(fs::exists(dir / "part.safetensors"));
  auto ckpt = ember::load_checkpoint(dir);
  RankPart back;
  ember::restore_components(ckpt, {{"part", &back}});
  ASSERT_EQ(back.loaded.size(), 1u);
  EXPECT_TRUE(torch::equal(back.loaded.at("part/0"), torch::zeros({2}, torch::kDouble)));
  ckpt.components.erase("part_shard_0");
  ckpt.components["partial_shard_0"] = {};  // another component's shards are not this one's
  try {
    ember::restore_components(ckpt, {{"part", &back}});
    FAIL() << "a checkpoint without the component was accepted";
  } catch (const ember::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no state for 'part'"), std::string::npos) << e.what();
  }
}
