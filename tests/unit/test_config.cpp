// Config: merging, overrides, validation errors that name file, key and expectation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ember/config/config.h"
#include "ember/util/error.h"

namespace fs = std::filesystem;
using ember::Config;
using ember::ConfigError;

namespace {

fs::path write_yaml(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / "ember_config_test";
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

std::string error_of(const std::vector<std::string>& files, const std::vector<std::string>& sets = {}) {
  try {
    ember::load_config(files, sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Config, DefaultsAreValid) {
  Config c = ember::load_config({}, {});
  EXPECT_EQ(c.model.embedding.kind, "tied");
  EXPECT_EQ(c.model.base_d_ff(), 512);  // 256 * ceil(8*128/3 / 256)
}

TEST(Config, LaterFilesWinAndMergeDeeply) {
  auto a = write_yaml("a.yaml", "model: {d_model: 64, n_heads: 4, mixer: {rope_base: 500000}}\n");
  auto b = write_yaml("b.yaml", "model: {d_model: 96}\ntrain: {steps: 7}\noptim: {warmup_steps: 2}\n");
  Config c = ember::load_config({a.string(), b.string()}, {});
  EXPECT_EQ(c.model.d_model, 96);
  EXPECT_EQ(c.model.n_heads, 4);
  EXPECT_DOUBLE_EQ(c.model.mixer.rope_base, 500000.0);
  EXPECT_EQ(c.train.steps, 7);
}

TEST(Config, SetOverridesAnyKey) {
  auto a = write_yaml("set.yaml", "train: {steps: 5}\noptim: {warmup_steps: 0}\n");
  Config c = ember::load_config({a.string()},
                                {"train.steps=11", "model.embedding.kind=untied", "data.train=[x, y]"});
  EXPECT_EQ(c.train.steps, 11);
  EXPECT_EQ(c.model.embedding.kind, "untied");
  EXPECT_EQ(c.data.train, (std::vector<std::string>{"x", "y"}));
}

TEST(Config, UnknownKeySuggestsTheClosest) {
  auto f = write_yaml("unknown.yaml", "model: {d_modle: 64}\n");
  auto msg = error_of({f.string()});
  EXPECT_NE(msg.find(f.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key 'model.d_modle'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'model.d_model'"), std::string::npos) << msg;
}

TEST(Config, UnknownSectionIsAnError) {
  auto msg = error_of({}, {"trian.steps=3"});
  EXPECT_NE(msg.find("unknown key 'trian'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'train'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--set trian.steps=3"), std::string::npos) << msg;
}

TEST(Config, WrongTypeNamesKeyAndValue) {
  auto f = write_yaml("type.yaml", "train: {steps: many}\n");
  auto msg = error_of({f.string()});
  EXPECT_NE(msg.find("train.steps: expected an integer, got 'many'"), std::string::npos) << msg;
  EXPECT_NE(error_of({}, {"model.embedding=3"}).find("expected a mapping"), std::string::npos);
  EXPECT_NE(error_of({}, {"optim.decay_embeddings=maybe"}).find("expected true or false"), std::string::npos);
}

TEST(Config, OutOfRangeValues) {
  EXPECT_NE(error_of({}, {"model.d_model=-8"}).find("model.d_model: expected a value > 0, got -8"),
            std::string::npos);
  EXPECT_NE(error_of({}, {"optim.beta2=1.5"}).find("optim.beta2"), std::string::npos);
  EXPECT_NE(error_of({}, {"optim.lr=0"}).find("optim.lr"), std::string::npos);
}

TEST(Config, BadChoiceSuggests) {
  auto msg = error_of({}, {"model.embedding.kind=tide"});
  EXPECT_NE(msg.find("expected one of tied | untied | albert | flat_mlp | factored_mlp | lev, got 'tide' (did you mean 'tied'?)"), std::string::npos) << msg;
}

TEST(Config, InconsistentCombinations) {
  auto f = write_yaml("heads.yaml", "model: {d_model: 100, n_heads: 3}\n");
  auto msg = error_of({f.string()});
  EXPECT_NE(msg.find(f.string() + ": model.d_model: d_model = 100 must be divisible by n_heads = 3"),
            std::string::npos) << msg;
  EXPECT_NE(error_of({}, {"model.n_kv_heads=3"}).find("multiple of n_kv_heads"), std::string::npos);
  EXPECT_NE(error_of({}, {"train.seq_len=1024"}).find("exceeds model.max_seq_len"), std::string::npos);
  EXPECT_NE(error_of({}, {"optim.min_lr=1"}).find("must not exceed lr"), std::string::npos);
  EXPECT_NE(error_of({}, {"train.steps=5"}).find("defaults: optim.warmup_steps: warmup_steps = 20 exceeds"),
            std::string::npos);
}

TEST(Config, BadYamlAndMissingFile) {
  auto f = write_yaml("bad.yaml", "model: {d_model: 64\ntrain: [\n");
  auto msg = error_of({f.string()});
  EXPECT_NE(msg.find(f.string() + ": invalid YAML"), std::string::npos) << msg;
  EXPECT_NE(error_of({"/nonexistent/x.yaml"}).find("'/nonexistent/x.yaml' does not exist"), std::string::npos);
  EXPECT_NE(error_of({}, {"train.steps"}).find("expected key.path=value"), std::string::npos);
}

TEST(Config, ResolvedYamlRoundTrips) {
  Config c = ember::load_config({}, {"optim.lr=0.0007", "model.norm_eps=1e-5", "data.val=[v.bin]"});
  const std::string text = ember::to_yaml(c);
  Config back = ember::parse_config_text(text, "resolved");
  EXPECT_EQ(ember::to_yaml(back), text);
  EXPECT_EQ(ember::config_hash(back), ember::config_hash(c));
  EXPECT_DOUBLE_EQ(back.optim.lr, 0.0007);
  EXPECT_DOUBLE_EQ(back.model.norm_eps, 1e-5);
  EXPECT_NE(text.find("lr: 0.0007"), std::string::npos) << text;
}
