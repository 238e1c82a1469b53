// The model hash is taken of the schema, not of cut text: keys added after checkpoints were written
// declare their legacy value (config/fields.h, added_field) and hash as absent at it. Held against
// the text surgery ember did before (kept here as the reference) on every shipped config and on
// each added key at and away from its legacy value, and shown on a section made up for the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "ember/config/yaml_writer.h"
#include "ember/model/mixers/hope_attention.h"
#include "ember/model/mixers/titans/titans.h"
#include "ember/run/run_config.h"
#include "ember/util/error.h"
#include "ember/util/sha256.h"

namespace fs = std::filesystem;

namespace {

// `text` without the block that starts with the line `header` (and its more indented lines).
std::string without_block(const std::string& text, const std::string& header) {
  const size_t start = text.find("\n" + header + "\n");
  if (start == std::string::npos) return text;
  const size_t indent = header.find_first_not_of(' ');
  size_t end = start + header.size() + 2;
  while (end < text.size() && text.find_first_not_of(' ', end) - end > indent) {
    const size_t newline = text.find('\n', end);
    end = newline == std::string::npos ? text.size() : newline + 1;
  }
  return text.substr(0, start + 1) + text.substr(end);
}

// model_hash as ember computed it up to 2026-12-06 (src/run/run_config.cpp at 13d8484), with the
// one key added since (model.mlp.kind, before: one SwiGLU) cut as that surgery would have cut it.
std::string reference_model_hash(const ember::ModelConfig& m) {
  std::string text = ember::section_yaml(m);
  text = without_block(text, "  kind: swiglu");
  if (m.mixer.rope_scaling.type == ember::RopeScalingType::none) text = without_block(text, "  rope_scaling:");
  text = without_block(text, "    inner_grad_clip: 0.0");
  text = without_block(text, "    memory_residual: true");
  text = without_block(text, "    inner_step: plain");
  text = without_block(text, "    memory: mlp");
  return ember::sha256_hex(text);
}

ember::Config with(const std::vector<std::string>& sets) { return ember::load_config({}, sets); }

}  // namespace

TEST(ModelHash, EveryShippedConfigHashesAsTheTextSurgeryDid) {
  int checked = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(EMBER_SOURCE_DIR_DEFAULT) / "configs")) {
    const auto folder = e.path().parent_path().filename();
    if (e.path().extension() != ".yaml" || folder == "sweeps" || folder == "ladders") continue;  // not configs
    // An overlay (tapered/wider_early.yaml) is given on top of its folder's cpu.yaml, as the docs do.
    ember::Config cfg;
    try {
      cfg = ember::load_config({e.path().string()}, {});
    } catch (const ember::ConfigError&) {
      cfg = ember::load_config({(e.path().parent_path() / "cpu.yaml").string(), e.path().string()}, {});
    }
    EXPECT_EQ(ember::model_hash(cfg.model), reference_model_hash(cfg.model)) << e.path();
    ++checked;
  }
  EXPECT_GE(checked, 25);
}

TEST(ModelHash, EachAddedKeyHashesAsAbsentAtItsLegacyValueOnly) {
  const std::vector<std::vector<std::string>> variants = {
      {},
      {"model.mixer.rope_scaling.type=llama3"},
      {"model.mixer.kind=titans"},
      {"model.mixer.kind=titans", "model.mixer.titans.inner_grad_clip=0"},
      {"model.mixer.kind=titans", "model.mixer.titans.inner_grad_clip=0", "model.mixer.titans.memory=linear"},
      {"model.mixer.kind=titans", "model.mixer.titans.inner_grad_clip=0", "model.mixer.titans.memory_residual=false"},
      {"model.mixer.kind=titans", "model.mixer.titans.inner_grad_clip=0", "model.mixer.titans.inner_step=normalized"},
      {"model.mixer.kind=hope_attention"},
      {"model.mixer.kind=hope_attention", "model.mixer.hope_attention.inner_grad_clip=0"},
      {"model.mixer.kind=gated_attention"},
      {"model.embedding.kind=lev"},
      {"model.mlp.taper.schedule=cosine"},
      {"model.mlp.kind=cms"},
      {"model.mlp.kind=cms", "model.mlp.cms.levels=2"},
  };
  std::set<std::string> hashes;
  for (const auto& sets : variants) {
    const auto cfg = with(sets);
    EXPECT_EQ(ember::model_hash(cfg.model), reference_model_hash(cfg.model)) << ::testing::PrintToString(sets);
    hashes.insert(ember::model_hash(cfg.model));
  }
  EXPECT_EQ(hashes.size(), variants.size()) << "two different models share a hash";
  // The resolved config.yaml keeps every key, legacy or not: only the hash leaves them out.
  const std::string yaml = ember::to_yaml(with({"model.mixer.kind=titans", "model.mixer.titans.inner_grad_clip=0"}));
  for (const char* key : {"inner_grad_clip: 0.0", "memory: mlp", "memory_residual: true", "inner_step: plain", "rope_scaling:"})
    EXPECT_NE(yaml.find(key), std::string::npos) << key;
}

namespace {

// A section as a contributor would extend it: `width` existed, `gain` came later (before: 1.0).
struct GrownSection {
  int64_t width = 8;
  double gain = 2.0;
  void fields(ember::FieldVisitor& v) {
    v.field("width", width);
    v.added_field("gain", gain, 1.0);
  }
};
struct OldSection {
  int64_t width = 8;
  void fields(ember::FieldVisitor& v) { v.field("width", width); }
};

}  // namespace

TEST(ModelHash, ANewKeyWithALegacyValueNeedsNoEditOfTheHashCode) {
  GrownSection grown;
  EXPECT_NE(ember::section_yaml(grown, true), ember::section_yaml(OldSection{}, true));  // gain 2.0 is new behaviour
  grown.gain = 1.0;
  EXPECT_EQ(ember::section_yaml(grown, true), ember::section_yaml(OldSection{}, true));
  EXPECT_NE(ember::section_yaml(grown).find("gain: 1.0"), std::string::npos);  // written as usual
}
