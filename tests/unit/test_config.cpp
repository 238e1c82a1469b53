// Config: merging, overrides, validation errors that name file, key and expectation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "ember/run/run_config.h"
#include "ember/config/yaml_writer.h"
#include "ember/model/embedding_baselines.h"
#include "ember/model/lev.h"
#include "ember/model/mixers/attention.h"
#include "ember/model/mixers/hope_attention.h"
#include "ember/model/mixers/titans/titans.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace fs = std::filesystem;
using ember::Config;
using ember::ConfigError;

namespace {

fs::path write_yaml(const std::string& name, const std::string& text) {
  static const fs::path dir = ember::testing::scratch_dir("config", std::to_string(::getpid()));
  return ember::testing::write_text(dir, name, text);
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
  Config c = ember::load_config({a.string()}, {"train.steps=11", "model.embedding.kind=untied", "data.train=[x, y]"});
  EXPECT_EQ(c.train.steps, 11);
  EXPECT_EQ(c.model.embedding.kind, "untied");
  EXPECT_EQ(c.data.train, (std::vector<std::string>{"x", "y"}));
}

// yaml-cpp would keep the last of two equal keys; ember names the second instead.
TEST(Config, AKeyGivenTwiceInOneMappingIsAnError) {
  auto f = write_yaml("twice.yaml", "train:\n  steps: 7\n  steps: 9\n");
  auto msg = error_of({f.string()});
  EXPECT_NE(msg.find(f.string() + ": line 3: key 'train.steps' appears twice"), std::string::npos) << msg;
  auto g = write_yaml("sections.yaml", "train: {steps: 7}\nmodel: {d_model: 64}\ntrain: {seed: 2}\n");
  EXPECT_NE(error_of({g.string()}).find("key 'train' appears twice"), std::string::npos);
  auto h = write_yaml("fine.yaml", "train: {steps: 70}\n");  // the same key in two files: the later wins
  EXPECT_EQ(error_of({h.string(), write_yaml("fine2.yaml", "train: {steps: 90}\n").string()}), "");
}

// yaml-cpp reads '<<' as a plain key; ember says what it is instead of "unknown key '<<'".
TEST(Config, MergeKeysAreRefusedByName) {
  auto f = write_yaml("merge.yaml", "base: &b {steps: 7}\ntrain:\n  <<: *b\n  seed: 3\n");
  auto msg = error_of({f.string()});
  EXPECT_NE(msg.find(f.string() + ": line 3: YAML merge keys ('<<') are not supported"), std::string::npos) << msg;
}

// Found by fuzz_yaml_config (tests/fuzz/corpus/yaml_config/crash-*): a key that is empty, a list or a
// mapping escaped from the unknown-key check as yaml-cpp's "bad conversion", naming nothing.
TEST(Config, KeysThatAreNotNamesAreRefusedWithTheirLine) {
  auto f = write_yaml("listkey.yaml", "model:\n  mlp: {? [a, b]: 1}\n");
  auto msg = error_of({f.string()});
  EXPECT_NE(msg.find(f.string() + ": line 2: a key in 'model.mlp' must be a name, not a list or mapping"),
            std::string::npos) << msg;
  auto g = write_yaml("nullkey.yaml", "model: {mlp: {taper: {schedule: groups, &g : [1.5, 1.0]}}}\n");
  msg = error_of({g.string()});
  EXPECT_NE(msg.find(g.string() + ": line 1: a key in 'model.mlp.taper' must be a name, not empty"), std::string::npos)
      << msg;
  msg = error_of({}, {"model={? {a: 1}: 2}"});
  EXPECT_NE(msg.find("--set model={? {a: 1}: 2}: line 1: a key in 'model' must be a name"), std::string::npos) << msg;
}

TEST(Config, SetWithoutAValueIsAnError) {
  auto msg = error_of({}, {"train.steps="});
  EXPECT_NE(msg.find("--set 'train.steps=': no value after '='"), std::string::npos) << msg;
  // Found by fuzz_yaml_config (tests/fuzz/corpus/yaml_config/timeout-*): a leading dot made the path
  // walk wrap its value forever.
  for (const std::string path : {".d_ff", "model..d_ff", "model.", "."}) {
    msg = error_of({}, {path + "=512"});
    EXPECT_NE(msg.find("empty key in '" + path + "'"), std::string::npos) << path << " -> " << msg;
  }
  EXPECT_EQ(error_of({}, {"log.name=''"}), "");  // an empty string, written as YAML
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
  EXPECT_NE(error_of({}, {"model.d_model=-8"}).find("model.d_model: expected a value > 0, got -8"), std::string::npos);
  EXPECT_NE(error_of({}, {"optim.beta2=1.5"}).find("optim.beta2"), std::string::npos);
  EXPECT_NE(error_of({}, {"optim.lr=0"}).find("optim.lr"), std::string::npos);
}

TEST(Config, BadChoiceSuggests) {
  auto msg = error_of({}, {"model.embedding.kind=tide"});
  EXPECT_NE(
      msg.find(
          "expected one of tied | untied | albert | flat_mlp | factored_mlp | lev, got 'tide' (did you mean 'tied'?)"),
      std::string::npos)
      << msg;
}

TEST(Config, InconsistentCombinations) {
  auto f = write_yaml("heads.yaml", "model: {d_model: 100, n_heads: 3}\n");
  auto msg = error_of({f.string()});
  EXPECT_NE(msg.find(f.string() + ": model.d_model: d_model = 100 must be divisible by n_heads = 3"), std::string::npos)
      << msg;
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

TEST(Config, EachKindHasItsOwnSectionAndComponentsGetTypedOptions) {
  Config c = ember::load_config(
      {}, {"model.embedding.kind=lev", "model.embedding.lev.rank=8", "model.embedding.lev.impl=reference",
           "model.mixer.kind=gated_attention", "model.mixer.gated_attention.gate=headwise"});
  EXPECT_EQ(c.model.embedding.get<ember::LevConfig>().rank, 8);
  EXPECT_EQ(c.model.embedding.get<ember::LevConfig>().impl, ember::LevImpl::reference);
  EXPECT_EQ(c.model.mixer.get<ember::GatedAttentionConfig>().gate, ember::Gate::headwise);
  // The resolved config writes only the selected kinds' sections, and reads back the same.
  const std::string text = ember::to_yaml(c);
  EXPECT_NE(text.find("lev:"), std::string::npos) << text;
  EXPECT_NE(text.find("gate: headwise"), std::string::npos) << text;
  EXPECT_EQ(text.find("albert:"), std::string::npos) << text;
  EXPECT_EQ(ember::to_yaml(ember::parse_config_text(text, "resolved")), text);
  // A non-selected kind's options are validated but do not change the model.
  Config other = ember::load_config({}, {"model.embedding.kind=lev", "model.embedding.lev.rank=8",
                                         "model.embedding.lev.impl=reference", "model.mixer.kind=gated_attention",
                                         "model.mixer.gated_attention.gate=headwise", "model.embedding.albert.dim=7"});
  EXPECT_EQ(ember::model_hash(other.model), ember::model_hash(c.model));
  EXPECT_NE(error_of({}, {"model.embedding.albert.dim=-1"}).find("model.embedding.albert.dim: expected a value >= 0"),
            std::string::npos);
}

// A checkpoint trained before model.mixer.rope_scaling existed (its state.json's model hash, written
// by ember at f19cc11) still resumes: the key at its default leaves the hash as it was; set, it
// changes it.
TEST(Config, ModelHashOfCheckpointsFromBeforeRopeScalingIsUnchanged) {
  const auto old = ember::parse_config_text(R"(model:
  vocab_size: 64
  d_model: 32
  n_layers: 2
  n_heads: 4
  n_kv_heads: 2
  max_seq_len: 64
  embedding: {kind: tied}
  mixer: {kind: gated_attention, gated_attention: {gate: elementwise}, rope_base: 10000.0}
  mlp: {d_ff: 64}
train: {seq_len: 32}
)",
                                            "old");
  EXPECT_EQ(ember::model_hash(old.model), "c6eca8424e111241c9ee3c99abb86c10ab8d58c84c05575cf9d0be1b4b770194");
  auto scaled = old.model;
  scaled.mixer.rope_scaling.type = ember::RopeScalingType::llama3;
  EXPECT_NE(ember::model_hash(scaled), ember::model_hash(old.model));
}

TEST(Config, AKindSizedAgainstAnotherWritesThatKindsSectionToo) {
  // albert is sized to P_LEV of the lev section: its resolved config carries that section, so a
  // run reloaded from config.yaml builds the same model (and the model hash covers it).
  Config c = ember::load_config(
      {}, {"model.embedding.kind=albert", "model.embedding.lev.d_seed=16", "model.embedding.lev.rank=4"});
  const std::string text = ember::to_yaml(c);
  EXPECT_NE(text.find("albert:"), std::string::npos) << text;
  EXPECT_NE(text.find("d_seed: 16"), std::string::npos) << text;
  Config back = ember::parse_config_text(text, "resolved");
  EXPECT_EQ(back.model.embedding.get<ember::LevConfig>().d_seed, 16);
  EXPECT_EQ(ember::model_hash(back.model), ember::model_hash(c.model));
  Config other = ember::load_config(
      {}, {"model.embedding.kind=albert", "model.embedding.lev.d_seed=32", "model.embedding.lev.rank=4"});
  EXPECT_NE(ember::model_hash(other.model), ember::model_hash(c.model));
  EXPECT_EQ(ember::embedding_sections_used("albert"), (std::vector<std::string>{"albert", "lev"}));
  EXPECT_EQ(ember::embedding_sections_used("tied"), (std::vector<std::string>{"tied"}));
}

TEST(Config, KindChoicesComeFromTheRegistries) {
  const auto embeddings = ember::embedding_kind_names();
  const auto mixers = ember::mixer_kind_names();
  EXPECT_EQ(embeddings, (std::vector<std::string>{"tied", "untied", "albert", "flat_mlp", "factored_mlp", "lev"}));
  EXPECT_EQ(mixers,
            (std::vector<std::string>{"attention", "gated_attention", "short_conv", "titans", "hope_attention"}));
  for (const auto& kind : embeddings) EXPECT_NO_THROW(ember::load_config({}, {"model.embedding.kind=" + kind})) << kind;
  for (const auto& kind : mixers) EXPECT_NO_THROW(ember::load_config({}, {"model.mixer.kind=" + kind})) << kind;
  auto msg = error_of({}, {"model.mixer.kind=gated"});
  EXPECT_NE(msg.find("expected one of attention | gated_attention | short_conv | titans | hope_attention, got 'gated'"),
            std::string::npos)
      << msg;
}

// Found by fuzz_yaml_config (tests/fuzz/corpus/yaml_config/crash-*): a run name ending in a carriage
// return (a file saved on Windows) was written bare and read back without it, so the resolved
// config.yaml described another config.
TEST(Config, StringsWithControlCharactersOrEdgeSpacesRoundTrip) {
  Config c = ember::load_config({}, {});
  c.log.name = "tiny_bpe\r";
  c.data.train = {" lead.bin", "tab\there.bin", "trail.bin ", "plain.bin"};
  const std::string text = ember::to_yaml(c);
  EXPECT_NE(text.find("train: [\" lead.bin\", \"tab\\there.bin\", \"trail.bin \", plain.bin]"), std::string::npos) << text;
  const Config back = ember::parse_config_text(text, "resolved");
  EXPECT_EQ(back.log.name, "tiny_bpe\r");
  EXPECT_EQ(back.data.train, c.data.train);
  EXPECT_EQ(ember::config_hash(back), ember::config_hash(c));
}

TEST(Config, MovedKeysSayWhereTheyWent) {
  auto msg = error_of({}, {"model.mixer.gate=headwise"});
  EXPECT_NE(msg.find("model.mixer.gate: this key moved to model.mixer.gated_attention.gate"), std::string::npos) << msg;
  msg = error_of({}, {"model.embedding.albert_dim=5"});
  EXPECT_NE(msg.find("moved to model.embedding.albert.dim"), std::string::npos) << msg;
  msg = error_of({}, {"model.mixer.gated_atention.gate=headwise"});
  EXPECT_NE(msg.find("did you mean 'model.mixer.gated_attention'"), std::string::npos) << msg;
  msg = error_of({}, {"model.embedding.lev.impl=fast"});
  EXPECT_NE(msg.find("model.embedding.lev.impl: expected one of auto | fused | reference, got 'fast'"),
            std::string::npos)
      << msg;
  msg = error_of({}, {"model.embedding.kind=lev", "model.embedding.lev.learnable_knot_scale=true",
                      "model.embedding.lev.impl=fused"});
  EXPECT_NE(msg.find("model.embedding.lev.learnable_knot_scale: needs model.embedding.lev.impl = reference or auto"),
            std::string::npos)
      << msg;
}

TEST(Config, EnumsParseOnceAndWriteTheirSpelling) {
  Config c = ember::load_config({}, {"train.precision=bf16", "optim.schedule=wsd", "train.on_nonfinite=skip",
                                     "model.mlp.taper.schedule=uniform", "train.device=cpu"});
  EXPECT_EQ(c.train.precision, ember::Precision::bf16);
  EXPECT_EQ(c.optim.schedule, ember::LrSchedule::wsd);
  EXPECT_EQ(c.train.on_nonfinite, ember::OnNonfinite::skip);
  EXPECT_EQ(c.train.device, ember::DeviceChoice::cpu);
  const std::string text = ember::to_yaml(c);
  EXPECT_NE(text.find("precision: bf16"), std::string::npos) << text;
  EXPECT_NE(text.find("device: cpu"), std::string::npos) << text;
  EXPECT_NE(error_of({}, {"train.precision=fp16"}).find("expected one of fp32 | bf16, got 'fp16'"), std::string::npos);
}

TEST(Config, FloatsAreWrittenSoYaml11ReadersSeeNumbers) {
  EXPECT_EQ(ember::yaml_float(1e-6), "1.0e-06");
  EXPECT_EQ(ember::yaml_float(3e-3), "0.003");
  EXPECT_EQ(ember::yaml_float(10000.0), "10000.0");
  EXPECT_EQ(ember::yaml_float(1e20), "1.0e+20");
  EXPECT_EQ(ember::yaml_float(2.5e-7), "2.5e-07");
  EXPECT_EQ(ember::yaml_float(-0.5), "-0.5");
  for (double x : {1e-6, 3e-3, 10000.0, 1e20, 2.5e-7, 0.1 + 0.2, 1.0 / 3.0})
    EXPECT_EQ(std::stod(ember::yaml_float(x)), x) << ember::yaml_float(x);
  Config c = ember::load_config({}, {"model.norm_eps=1e-6"});
  const std::string text = ember::to_yaml(c);
  EXPECT_NE(text.find("norm_eps: 1.0e-06"), std::string::npos) << text;
  EXPECT_NE(text.find("rope_base: 10000.0"), std::string::npos) << text;
}

TEST(Config, DistributedKeysAreReadAndCheckedByName) {
  Config c = ember::load_config({}, {"distributed.backend=gloo", "distributed.bucket_mb=4",
                                     "distributed.grad_comm=bf16", "distributed.timeout_s=30",
                                     "distributed.heartbeat_timeout_s=10", "distributed.interface=eth1"});
  EXPECT_EQ(c.distributed.backend, ember::Backend::gloo);
  EXPECT_EQ(c.distributed.heartbeat_timeout_s, 10);
  EXPECT_EQ(c.distributed.interface, "eth1");
  EXPECT_EQ(Config{}.distributed.heartbeat_timeout_s, 30);
  EXPECT_EQ(c.distributed.bucket_bytes(), 4 * 1024 * 1024);
  EXPECT_EQ(c.distributed.grad_comm, ember::GradComm::bf16);
  EXPECT_EQ(c.distributed.timeout_s, 30);
  EXPECT_NE(error_of({}, {"distributed.backend=mpi"}).find("distributed.backend"), std::string::npos);
  EXPECT_NE(error_of({}, {"distributed.timeout_s=0"}).find("distributed.timeout_s"), std::string::npos);
  EXPECT_NE(error_of({}, {"distributed.bucket_mb=-1"}).find("distributed.bucket_mb"), std::string::npos);
  EXPECT_NE(error_of({}, {"distributed.heartbeat_timeout_s=0"}).find("distributed.heartbeat_timeout_s"),
            std::string::npos);
}

namespace {

// configs/tiny.yaml's model with the given `mixer:` block (indented by 4).
ember::Config tiny_model_with_mixer(const std::string& mixer) {
  return ember::parse_config_text(R"(model:
  vocab_size: 256
  d_model: 128
  n_layers: 4
  n_heads: 4
  max_seq_len: 256
  embedding: {kind: tied}
  mixer:
)" + mixer + "  mlp: {d_ff: 384}\n",
                                  "old");
}

}  // namespace

// A Titans run trained before model.mixer.titans.inner_grad_clip existed (the hash its checkpoint
// stored, tiny.yaml + mixers/titans.yaml): its memory was not clipped, so it resumes with the clip
// off (--set model.mixer.titans.inner_grad_clip=0) and is refused with the new default.
TEST(Config, ModelHashOfTitansCheckpointsFromBeforeTheInnerClipResumesWithTheClipOff) {
  auto old = tiny_model_with_mixer(R"(    kind: titans
    rope_base: 10000
    titans: {chunk_size: 16, retrieval: after, memory_expansion: 4, theta_max: 0.1, conv_kernel: 4,
             persistent_tokens: 4}
)");
  const std::string stored = "38d7c295eec04b1bf9e3c3011ad5b59ab6f1e8a0397815b7d9de866ef9ce7b22";
  EXPECT_NE(ember::model_hash(old.model), stored);
  old.model.mixer.get<ember::TitansConfig>().inner_grad_clip = 0.0;
  EXPECT_EQ(ember::model_hash(old.model), stored);
}

// The same for Hope-attention's CMS levels (model.mixer.hope_attention.inner_grad_clip; the hash a
// tiny.yaml + mixers/hope_attention.yaml checkpoint stored before the clip existed).
TEST(Config, ModelHashOfHopeCheckpointsFromBeforeTheInnerClipResumesWithTheClipOff) {
  auto old = tiny_model_with_mixer(R"(    kind: hope_attention
    hope_attention: {levels: 4, update: chunked, chunk_sizes: [16, 64, 256, 0], inner_lr: 0.01, signal: two_pass}
)");
  const std::string stored = "1919ba58abd1d3beff849e4215e9a0a6fdcec8ad395e1a182c84440cca455ad4";
  EXPECT_NE(ember::model_hash(old.model), stored);
  old.model.mixer.get<ember::HopeAttentionConfig>().inner_grad_clip = 0.0;
  EXPECT_EQ(ember::model_hash(old.model), stored);
}
