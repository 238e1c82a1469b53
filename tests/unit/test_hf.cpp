// The Hugging Face mapping (interop/, data/hf_tokenizer.h) without transformers: GPT-2's byte map
// against its published values, merges recovered from hand-made ranks, tensor names, config.json
// both ways (with every refusal), parameters through the HF names and back bit for bit, sharded
// weight files, and the staged output directory. tests/integration/hf.sh checks the same files
// against transformers, tokenizers and tiktoken.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/run/parameters.h"
#include "ember/run/run_config.h"
#include "ember/config/json_writer.h"
#include "ember/data/hf_tokenizer.h"
#include "ember/interop/hf_files.h"
#include "ember/interop/hf_llama.h"
#include "ember/model/mixers/attention.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "scratch.h"
#include "test_helpers.h"

namespace {

using ember::CheckpointError;

ember::ModelConfig hf_model() {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 16, c.n_layers = 3, c.n_heads = 4, c.n_kv_heads = 2, c.max_seq_len = 32;
  c.mlp.d_ff = 48;
  return c;
}

nlohmann::json llama_json() {
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"vocab_size", 96},
          {"hidden_size", 64},
          {"intermediate_size", 160},
          {"num_hidden_layers", 2},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 2},
          {"max_position_embeddings", 256},
          {"rms_norm_eps", 1e-5},
          {"rope_theta", 5000.0},
          {"tie_word_embeddings", false},
          {"hidden_act", "silu"},
          {"head_dim", 16}};
}

TEST(HfTokenizer, ByteLevelCharactersAreGpt2s) {
  // GPT-2's bytes_to_unicode: printable Latin-1 stands for itself, the rest is 256 + n in order.
  EXPECT_EQ(ember::byte_level_char('A'), "A");
  EXPECT_EQ(ember::byte_level_char(' '), "\xC4\xA0");   // U+0120 'Ġ'
  EXPECT_EQ(ember::byte_level_char('\n'), "\xC4\x8A");  // U+010A 'Ċ'
  EXPECT_EQ(ember::byte_level_char(0), "\xC4\x80");     // U+0100
  EXPECT_EQ(ember::byte_level_char(127), "\xC4\xA1");   // U+0121
  EXPECT_EQ(ember::byte_level_char(173), "\xC5\x83");   // U+0143, the last stand-in
  EXPECT_EQ(ember::byte_level_char(255), "\xC3\xBF");   // U+00FF itself
  std::set<std::string> all;
  for (int b = 0; b < 256; ++b) all.insert(ember::byte_level_char(static_cast<unsigned char>(b)));
  EXPECT_EQ(all.size(), 256u);
}

TEST(HfTokenizer, MergesFollowTiktokensOrder) {
  // abca (7) is built from abc (4) + a, not ab + ca: under ranks < 7, ab merges first, then abc.
  const std::vector<std::string> ranks = {"a", "b", "c", "ab", "abc", "bc", "ca", "abca", "cc"};
  const auto merges = ember::bpe_merges(ranks);
  const std::vector<std::pair<std::string, std::string>> want = {{"a", "b"}, {"ab", "c"},  {"b", "c"},
                                                                 {"c", "a"}, {"abc", "a"}, {"c", "c"}};
  EXPECT_EQ(merges, want);
}

TEST(HfTokenizer, ByteLevelJsonMapsEveryByteToItself) {
  const auto j = ember::hf_tokenizer_json(ember::TextEncoder::bytes());
  const auto& vocab = j["model"]["vocab"];
  ASSERT_EQ(vocab.size(), 256u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(vocab[ember::byte_level_char(static_cast<unsigned char>(b))], b);
  EXPECT_TRUE(j["model"]["merges"].empty());
}

TEST(HfLlama, TensorNames) {
  EXPECT_EQ(ember::hf_tensor_name("embedding.weight"), "model.embed_tokens.weight");
  EXPECT_EQ(ember::hf_tensor_name("head.weight"), "lm_head.weight");
  EXPECT_EQ(ember::hf_tensor_name("final_norm.weight"), "model.norm.weight");
  EXPECT_EQ(ember::hf_tensor_name("layers.12.mixer.wk"), "model.layers.12.self_attn.k_proj.weight");
  EXPECT_EQ(ember::hf_tensor_name("layers.0.mlp_norm.weight"), "model.layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(ember::hf_tensor_name("layers.3.mlp.w_down"), "model.layers.3.mlp.down_proj.weight");
  EXPECT_NE(ember::testing::error_message([] { ember::hf_tensor_name("layers.0.mixer.w1"); }).find("'layers.0.mixer.w1'"),
            std::string::npos);
}

TEST(HfLlama, ConfigFromLlamaKeys) {
  const auto m = ember::model_config_from_hf(llama_json(), "c.json");
  EXPECT_EQ(m.vocab_size, 96);
  EXPECT_EQ(m.d_model, 64);
  EXPECT_EQ(m.mlp.d_ff, 160);
  EXPECT_EQ(m.n_layers, 2);
  EXPECT_EQ(m.kv_heads(), 2);
  EXPECT_EQ(m.max_seq_len, 256);
  EXPECT_DOUBLE_EQ(m.norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(m.mixer.rope_base, 5000.0);
  EXPECT_EQ(m.embedding.kind, "untied");
  EXPECT_EQ(m.mixer.kind, "attention");
  auto v5 = llama_json();  // transformers 5 keeps RoPE's base under rope_parameters
  v5.erase("rope_theta");
  v5["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 500000.0}};
  EXPECT_DOUBLE_EQ(ember::model_config_from_hf(v5, "c.json").mixer.rope_base, 500000.0);
}

// Llama 3.2 1B's config.json (transformers 4.45): llama3 RoPE scaling under rope_scaling.
TEST(HfLlama, Llama32ConfigLoadsItsRopeScaling) {
  const auto c = nlohmann::json::parse(R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false,
    "head_dim": 64, "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 8192,
    "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama", "num_attention_heads": 32,
    "num_hidden_layers": 16, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0,
    "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 8192,
    "rope_type": "llama3"}, "rope_theta": 500000.0, "tie_word_embeddings": true, "vocab_size": 128256})");
  const auto m = ember::model_config_from_hf(c, "config.json");
  EXPECT_DOUBLE_EQ(m.mixer.rope_base, 500000.0);
  EXPECT_EQ(m.mixer.rope_scaling.type, ember::RopeScalingType::llama3);
  EXPECT_DOUBLE_EQ(m.mixer.rope_scaling.factor, 32.0);
  EXPECT_DOUBLE_EQ(m.mixer.rope_scaling.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(m.mixer.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(m.mixer.rope_scaling.original_max_seq_len, 8192);
  EXPECT_EQ(m.kv_heads(), 8);
  EXPECT_EQ(m.embedding.kind, "tied");
  auto broken = c;
  broken["rope_scaling"].erase("low_freq_factor");
  EXPECT_NE(ember::testing::error_message([&] { ember::model_config_from_hf(broken, "config.json"); }).find("no 'low_freq_factor'"),
            std::string::npos);
}

TEST(HfLlama, RefusesWhatEmberWouldLoadWrongly) {
  const auto refused = [](const std::function<void(nlohmann::json&)>& edit) {
    auto c = llama_json();
    edit(c);
    return ember::testing::error_message([&] { ember::model_config_from_hf(c, "c.json"); });
  };
  EXPECT_NE(refused([](auto& c) { c["model_type"] = "mistral"; }).find("model_type 'mistral'"), std::string::npos);
  EXPECT_NE(refused([](auto& c) {
              c["architectures"] = {"LlamaForSequenceClassification"};
            }).find("LlamaForSequenceClassification"),
            std::string::npos);
  EXPECT_NE(refused([](auto& c) {
              c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
            }).find("'yarn'"),
            std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["mlp_bias"] = true; }).find("mlp_bias"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["hidden_act"] = "gelu"; }).find("'gelu'"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["head_dim"] = 32; }).find("head_dim 32"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c.erase("vocab_size"); }).find("no 'vocab_size'"), std::string::npos);
  EXPECT_NE(refused([](auto& c) {
              c["intermediate_sizes"] = {160, 80};
            }).find("intermediate_sizes"),
            std::string::npos);
}

// Found by fuzz_hf_config (tests/fuzz/corpus/hf_config/crash-*): a key of another type escaped as
// nlohmann's type_error, which names neither the file nor the key.
TEST(HfLlama, KeysOfAnotherTypeAreCheckpointErrorsNamingTheKey) {
  const auto refused = [](const std::function<void(nlohmann::json&)>& edit) {
    auto c = llama_json();
    edit(c);
    return ember::testing::error_message([&] { ember::model_config_from_hf(c, "c.json"); });
  };
  EXPECT_NE(refused([](auto& c) { c["model_type"] = 36; }).find("'model_type'"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["architectures"] = {7}; }).find("architecture 7"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["hidden_act"] = nlohmann::json::array(); }).find("'hidden_act'"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["mlp_bias"] = "no"; }).find("'mlp_bias'"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["hidden_size"] = 64.5; }).find("'hidden_size' is not an integer"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["max_position_embeddings"] = 1e300; }).find("'max_position_embeddings'"),
            std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["rms_norm_eps"] = "small"; }).find("'rms_norm_eps'"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["rope_scaling"] = {1, 2}; }).find("rope_scaling"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["head_dim"] = "32"; }).find("'head_dim'"), std::string::npos);
  EXPECT_NE(refused([](auto& c) { c["tie_word_embeddings"] = 1; }).find("'tie_word_embeddings'"), std::string::npos);
}

TEST(HfLlama, ConfigRoundTripKeepsTaperAndGate) {
  auto cfg = hf_model();
  cfg.mixer.kind = "gated_attention";
  cfg.mixer.get<ember::GatedAttentionConfig>().gate = ember::Gate::headwise;
  cfg.mlp.taper.schedule = ember::TaperSchedule::linear;
  ember::LanguageModel model(cfg);
  const auto arch = ember::hf_architecture(model);
  EXPECT_TRUE(arch.remote_code());
  EXPECT_EQ(arch.class_name(), "EmberForCausalLM");
  EXPECT_TRUE(arch.tied);
  const auto j = ember::hf_config_json(cfg, arch, at::kFloat, {{"model", ember::section_json(cfg)}});
  EXPECT_EQ(j["intermediate_sizes"].get<std::vector<int64_t>>(), cfg.layer_d_ff());
  EXPECT_EQ(j["attention_gate"], "headwise");
  const auto back = ember::model_config_from_hf(j, "c.json");
  EXPECT_EQ(ember::model_hash(back), ember::model_hash(cfg));
  auto edited = j;  // Llama's keys and ember's section must agree
  edited["hidden_size"] = 32;
  EXPECT_NE(ember::testing::error_message([&] { ember::model_config_from_hf(edited, "c.json"); }).find("'hidden_size' = 32 disagrees"),
            std::string::npos);
}

TEST(HfLlama, ParametersThroughHfNamesAreBitIdentical) {
  torch::manual_seed(3);
  auto cfg = hf_model();
  cfg.embedding.kind = "untied";
  ember::LanguageModel a(cfg), b(cfg);
  const auto arch = ember::hf_architecture(a);
  EXPECT_FALSE(arch.remote_code());
  ember::load_hf_tensors(b, ember::hf_tensors(a, arch, at::kFloat), "test");
  const auto ta = ember::module_tensors(a), tb = ember::module_tensors(b);
  for (const auto& [name, t] : ta) EXPECT_TRUE(torch::equal(t, tb.at(name))) << name;
}

TEST(HfLlama, GeneratedTablesAndScaledHeadsExportAsTheirValues) {
  torch::manual_seed(4);
  auto cfg = hf_model();
  cfg.embedding.kind = "albert";
  cfg.embedding.output_scale = 0.5;
  ember::LanguageModel model(cfg);
  const auto arch = ember::hf_architecture(model);
  EXPECT_FALSE(arch.tied);
  const auto t = ember::hf_tensors(model, arch, at::kFloat);
  EXPECT_TRUE(torch::equal(t.at("model.embed_tokens.weight"), model.embedding().materialize()));
  EXPECT_TRUE(torch::allclose(t.at("lm_head.weight"), model.head_weight() * 0.5));
  const auto bf16 = ember::hf_tensors(model, arch, at::kBFloat16);
  for (const auto& [name, x] : bf16) EXPECT_EQ(x.scalar_type(), at::kBFloat16) << name;
}

TEST(HfLlama, RefusesMixersWithoutACounterpart) {
  for (const std::string kind : {"titans", "short_conv", "hope_attention"}) {
    auto cfg = hf_model();
    cfg.mixer.kind = kind;
    ember::LanguageModel model(cfg);
    EXPECT_NE(ember::testing::error_message([&] { ember::hf_architecture(model); }).find("no transformers counterpart"), std::string::npos)
        << kind;
  }
}

TEST(HfLlama, LoadNamesTheBadTensor) {
  auto cfg = hf_model();
  ember::LanguageModel model(cfg);
  const auto good = ember::hf_tensors(model, ember::hf_architecture(model), at::kFloat);
  auto missing = good;
  missing.erase("model.layers.1.self_attn.v_proj.weight");
  EXPECT_NE(ember::testing::error_message([&] {
              ember::load_hf_tensors(model, missing, "d");
            }).find("'model.layers.1.self_attn.v_proj.weight' is missing"),
            std::string::npos);
  auto wrong = good;
  wrong["model.norm.weight"] = torch::ones({17});
  EXPECT_NE(ember::testing::error_message([&] { ember::load_hf_tensors(model, wrong, "d"); }).find("has shape 17, the config needs 16"),
            std::string::npos);
  auto extra = good;
  extra["model.layers.0.self_attn.q_proj.bias"] = torch::zeros({16});
  EXPECT_NE(ember::testing::error_message([&] {
              ember::load_hf_tensors(model, extra, "d");
            }).find("unexpected tensor 'model.layers.0.self_attn.q_proj.bias'"),
            std::string::npos);
  auto old = good;  // RoPE buffers of old checkpoints are not parameters
  old["model.layers.0.self_attn.rotary_emb.inv_freq"] = torch::ones({2});
  EXPECT_NO_THROW(ember::load_hf_tensors(model, old, "d"));
}

TEST(HfFiles, ShardsAndIndexRoundTrip) {
  const auto dir = ember::testing::scratch_dir("hf", "shards");
  ember::TensorMap tensors;
  for (int i = 0; i < 5; ++i) tensors["t" + std::to_string(i)] = torch::randn({100 + i});
  std::filesystem::create_directories(dir / "one");
  std::filesystem::create_directories(dir / "many");
  EXPECT_EQ(ember::write_hf_weights(dir / "one", tensors, 1 << 20).size(), 1u);
  const auto many = ember::write_hf_weights(dir / "many", tensors, 900);  // ~2 tensors per shard
  EXPECT_EQ(many.size(), 4u);                                             // 3 shards + the index
  EXPECT_TRUE(std::filesystem::exists(dir / "many" / "model-00003-of-00003.safetensors"));
  for (const auto& sub : {"one", "many"}) {
    const auto back = ember::read_hf_weights(dir / sub);
    ASSERT_EQ(back.size(), tensors.size());
    for (const auto& [name, t] : tensors) EXPECT_TRUE(torch::equal(back.at(name), t)) << name;
  }
  std::filesystem::remove(dir / "many" / "model-00002-of-00003.safetensors");
  EXPECT_NE(ember::testing::error_message([&] {
              ember::read_hf_weights(dir / "many");
            }).find("'model-00002-of-00003.safetensors', which is missing"),
            std::string::npos);
  EXPECT_NE(ember::testing::error_message([&] { ember::read_hf_weights(dir); }).find("no model.safetensors"), std::string::npos);
}

// Found by fuzz_hf_index (tests/fuzz/corpus/hf_index/crash-*): a weight_map value that is not a string
// escaped as nlohmann's type_error; a shard named "" or "." is the folder itself.
TEST(HfFiles, WeightMapEntriesThatAreNotFilesAreNamed) {
  const auto dir = ember::testing::scratch_dir("hf", "bad_index");
  ember::save_safetensors(dir / "model-00001-of-00001.safetensors", {{"w", torch::ones({2})}});
  const auto message_for = [&](const std::string& weight_map) {
    ember::testing::write_text(dir, "model.safetensors.index.json", R"({"weight_map": )" + weight_map + "}");
    return ember::testing::error_message([&] { ember::read_hf_weights(dir); });
  };
  EXPECT_NE(message_for(R"({"w": {"file": 1}})").find(R"(weight_map['w'] is {"file":1}, not a file name)"), std::string::npos);
  EXPECT_NE(message_for(R"({"w": 7})").find("weight_map['w'] is 7"), std::string::npos);
  EXPECT_NE(message_for(R"({"w": "."})").find("is a directory, not a file"), std::string::npos);
  // A name longer than the file system allows: std::filesystem threw "File name too long".
  EXPECT_NE(message_for(R"({"w": ")" + std::string(300, 'x') + R"("})").find("which is missing"), std::string::npos);
  EXPECT_EQ(message_for(R"({"w": "model-00001-of-00001.safetensors"})"), "(no error)");
}

TEST(HfFiles, ByteSizes) {
  EXPECT_EQ(ember::parse_byte_size("5GB", "f"), 5'000'000'000);
  EXPECT_EQ(ember::parse_byte_size("200mb", "f"), 200'000'000);
  EXPECT_EQ(ember::parse_byte_size("1.5KiB", "f"), 1536);
  EXPECT_EQ(ember::parse_byte_size("4096", "f"), 4096);
  EXPECT_NE(ember::testing::error_message([] { ember::parse_byte_size("lots", "--max-shard-size"); }).find("--max-shard-size: 'lots'"),
            std::string::npos);
  EXPECT_NE(ember::testing::error_message([] { ember::parse_byte_size("5XB", "f"); }), "(no error)");
}

TEST(StagedDirectory, PublishesWholeOrLeavesNothing) {
  const auto dir = ember::testing::scratch_dir("hf", "staged");
  {
    ember::StagedDirectory out(dir / "a", "test");
    ember::testing::write_text(out.path(), "x.txt", "x");
  }  // not published: gone
  EXPECT_FALSE(std::filesystem::exists(dir / "a"));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::create_directories(dir / "b");  // an empty target is fine
  ember::StagedDirectory out(dir / "b", "test");
  ember::testing::write_text(out.path(), "x.txt", "x");
  out.publish();
  EXPECT_TRUE(std::filesystem::exists(dir / "b" / "x.txt"));
  EXPECT_NE(ember::testing::error_message([&] { ember::StagedDirectory again(dir / "b", "export hf"); }).find("export hf: '"),
            std::string::npos);
  ember::StagedDirectory slash((dir / "c").string() + "/", "test");  // a trailing slash names c
  slash.publish();
  EXPECT_TRUE(std::filesystem::is_directory(dir / "c"));
}

}  // namespace
