// Embedding matrices from safetensors (bf16, sharded index), .npy and ember checkpoints' names,
// and clear errors for missing tensors, truncated files and unknown inputs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "ember/analysis/capacity_report.h"
#include "ember/analysis/embedding_source.h"
#include "ember/io/npy.h"
#include "ember/io/safetensors.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace fs = std::filesystem;
using namespace ember;

namespace {

fs::path source_scratch(const std::string& name) { return ember::testing::scratch_dir("capacity_sources", name); }

template <class F>
void expect_error_containing(F&& f, const std::vector<std::string>& wants) {
  try {
    f();
    FAIL() << "no error; wanted " << wants.front();
  } catch (const Error& e) {
    for (const auto& want : wants) EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

void write_npy(const fs::path& p, const std::string& descr, const std::string& shape, const void* data, size_t bytes,
               bool fortran = false) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::ofstream f(p, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t n = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&n), 2);
  f << header;
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

}  // namespace

TEST(CapacitySources, Bf16SafetensorsRoundTripFindsTheEmbedding) {
  torch::manual_seed(0);
  auto dir = source_scratch("bf16");
  auto emb = torch::randn({300, 32}).to(torch::kBFloat16);
  save_safetensors(dir / "model.safetensors", {{"model.embed_tokens.weight", emb},
                                               {"lm_head.weight", torch::randn({300, 32})},
                                               {"model.norm.weight", torch::ones({32})}});
  auto m = load_embedding_matrix(dir);  // the directory: finds model.safetensors
  EXPECT_EQ(m.tensor, "model.embed_tokens.weight");
  EXPECT_EQ(m.format, "safetensors");
  EXPECT_EQ(m.head, HeadTying::untied);  // the file has lm_head.weight
  EXPECT_EQ(m.matrix.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(m.matrix, emb));
  auto head = load_embedding_matrix(dir / "model.safetensors", "lm_head.weight");
  EXPECT_EQ(head.matrix.size(0), 300);
  EXPECT_EQ(head.head, HeadTying::unknown);  // a named tensor: not known to be the input embedding
  CapacityOptions o;
  auto r = capacity_report(m, o);
  EXPECT_EQ(r.dtype, "bf16");
  EXPECT_EQ(r.estimate.rows, 300);
  EXPECT_NEAR(r.estimate.sigma, 1.0 / std::sqrt(32.0), 0.02);
}

TEST(CapacitySources, ShardedIndexReadsOnlyTheShardWithTheTensor) {
  torch::manual_seed(1);
  auto dir = source_scratch("sharded");
  auto emb = torch::randn({64, 16}, torch::kHalf);
  save_safetensors(dir / "model-00001-of-00002.safetensors", {{"transformer.h.0.w", torch::randn({4, 4})}});
  save_safetensors(dir / "model-00002-of-00002.safetensors", {{"transformer.wte.weight", emb}});
  std::ofstream(dir / "model.safetensors.index.json")
      << R"({"metadata": {"total_size": 0}, "weight_map": {"transformer.h.0.w": "model-00001-of-00002.safetensors",
           "transformer.wte.weight": "model-00002-of-00002.safetensors"}})";
  for (const auto& input : {dir, dir / "model.safetensors.index.json"}) {
    auto m = load_embedding_matrix(input);
    EXPECT_EQ(m.format, "safetensors (sharded)");
    EXPECT_EQ(m.tensor, "transformer.wte.weight");
    EXPECT_EQ(m.head, HeadTying::tied);  // no separate head tensor
    EXPECT_TRUE(torch::equal(m.matrix, emb));
  }
  expect_error_containing([&] { load_embedding_matrix(dir, "nope.weight"); }, {"no tensor 'nope.weight'"});
  std::ofstream(dir / "bad.index.json") << R"({"weight_map": {"transformer.wte.weight": 3}})";  // found by fuzz_hf_index
  expect_error_containing([&] { load_embedding_matrix(dir / "bad.index.json"); },
                          {"bad.index.json", "weight_map['transformer.wte.weight'] is 3, not a file name"});
  std::ofstream(dir / "long.index.json") << R"({"weight_map": {"transformer.wte.weight": ")" << std::string(300, 'x') << R"("}})";
  expect_error_containing([&] { load_embedding_matrix(dir / "long.index.json"); }, {"long.index.json", "does not exist"});
  fs::remove(dir / "model-00002-of-00002.safetensors");
  expect_error_containing([&] { load_embedding_matrix(dir); }, {"model-00002-of-00002.safetensors", "does not exist"});
}

TEST(CapacitySources, MissingTensorAndTruncatedFileAreNamed) {
  auto dir = source_scratch("bad");
  save_safetensors(dir / "w.safetensors", {{"encoder.weight", torch::randn({8, 8})}});
  expect_error_containing([&] { load_embedding_matrix(dir / "w.safetensors"); },
                          {"w.safetensors", "no input-embedding tensor", "--tensor", "encoder.weight"});
  expect_error_containing([&] { load_embedding_matrix(dir / "w.safetensors", "embed"); },
                          {"no tensor 'embed'", "encoder.weight"});
  save_safetensors(dir / "t.safetensors", {{"wte.weight", torch::randn({64, 64})}});
  fs::resize_file(dir / "t.safetensors", fs::file_size(dir / "t.safetensors") - 100);
  expect_error_containing([&] { load_embedding_matrix(dir / "t.safetensors"); }, {"t.safetensors", "truncated"});
  expect_error_containing([&] { load_embedding_matrix(dir / "nothing.safetensors"); }, {"does not exist"});
  std::ofstream(dir / "notes.txt") << "hello";
  expect_error_containing([&] { load_embedding_matrix(dir / "notes.txt"); }, {"notes.txt", "expected an ember run"});
}

TEST(CapacitySources, OneDimensionalTensorIsRefusedWithItsName) {
  auto dir = source_scratch("onedim");
  save_safetensors(dir / "m.safetensors", {{"model.embed_tokens.weight", torch::randn({100})}});
  CapacityOptions o;
  expect_error_containing([&] { capacity_report((dir / "m.safetensors").string(), o); },
                          {"m.safetensors [model.embed_tokens.weight]", "expected a 2-D"});
}

TEST(CapacitySources, NpyMatricesInCAndFortranOrder) {
  auto dir = source_scratch("npy");
  auto m = torch::arange(12, torch::kFloat).reshape({3, 4});
  write_npy(dir / "c.npy", "<f4", "(3, 4)", m.data_ptr(), 48);
  EXPECT_TRUE(torch::equal(load_npy(dir / "c.npy"), m));
  auto ft = m.t().contiguous();  // column-major bytes of m
  write_npy(dir / "f.npy", "<f4", "(3, 4)", ft.data_ptr(), 48, true);
  EXPECT_TRUE(torch::equal(load_npy(dir / "f.npy"), m));
  auto h = m.to(torch::kHalf);
  write_npy(dir / "h.npy", "<f2", "(3, 4)", h.data_ptr(), 24);
  auto loaded = load_embedding_matrix(dir / "h.npy");
  EXPECT_EQ(loaded.format, "npy");
  EXPECT_TRUE(torch::equal(loaded.matrix, h));
  write_npy(dir / "short.npy", "<f4", "(3, 4)", m.data_ptr(), 40);
  expect_error_containing([&] { load_npy(dir / "short.npy"); }, {"short.npy", "truncated"});
  write_npy(dir / "be.npy", ">f4", "(3, 4)", m.data_ptr(), 48);
  expect_error_containing([&] { load_npy(dir / "be.npy"); }, {"unsupported .npy dtype '>f4'"});
  std::ofstream(dir / "junk.npy") << "not numpy";
  expect_error_containing([&] { load_npy(dir / "junk.npy"); }, {"junk.npy", "not a .npy file"});
}

TEST(CapacitySources, KnownNamesAndSuffixes) {
  EXPECT_EQ(find_embedding_tensor({"lm_head.weight", "model.embed_tokens.weight"}, "x"), "model.embed_tokens.weight");
  EXPECT_EQ(find_embedding_tensor({"h.0.attn", "wte.weight"}, "x"), "wte.weight");
  EXPECT_EQ(find_embedding_tensor({"backbone.embed_tokens.weight"}, "x"), "backbone.embed_tokens.weight");
  EXPECT_THROW(find_embedding_tensor({"a", "b"}, "x"), DataError);
}

TEST(CapacitySources, VocabularyAndFeatureDirections) {
  CapacityReport r;
  r.estimate.rows = 1000;
  r.bounds = capacity_bounds(4096, 0.0645);         // capacity 3.99e7
  EXPECT_FALSE(feature_directions(r).has_value());  // head unknown
  r.head = HeadTying::untied;
  EXPECT_EQ(vocabulary_directions(r), 2000);
  EXPECT_NEAR(feature_directions(r)->value(), r.bounds.full.value() - 2000, 1.0);
  r.head = HeadTying::tied;
  EXPECT_NEAR(feature_directions(r)->value(), r.bounds.full.value() - 1000, 1.0);
  r.estimate.rows = 100000000;  // more vocabulary than capacity: nothing left
  EXPECT_EQ(feature_directions(r)->value(), 0.0);
  r.bounds = capacity_bounds(4096, 0.15);  // indeterminate: no bookkeeping
  EXPECT_FALSE(feature_directions(r).has_value());
}

TEST(CapacitySources, ReportJsonHasTheLabelledFields) {
  torch::manual_seed(2);
  EmbeddingMatrix m{torch::randn({200, 64}), "mem", "npy", "", HeadTying::unknown};
  CapacityOptions o;
  const auto j = report_json(capacity_report(m, o));
  for (const char* key : {"V", "d", "mu", "sigma", "epsilon", "epsilon_3sigma", "class", "capacity",
                          "capacity_full_form", "capacity_single_constant", "capacity_jl", "method", "pairs"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["method"], "exact");
  EXPECT_EQ(j["pairs"], 200 * 199 / 2);
  EXPECT_NEAR(j["epsilon"].get<double>(), j["mu"].get<double>() + 2 * j["sigma"].get<double>(), 1e-12);
  EXPECT_EQ(j["class"], "1");  // d = 64: sigma ~ 0.125, eps ~ 0.25
  EXPECT_EQ(j["capacity"], "indeterminate");
  EXPECT_TRUE(j["head"].is_null() && j["feature_directions"].is_null());
  const auto table = comparison_table({capacity_report(m, o)});
  EXPECT_NE(table.find("capacity(full)"), std::string::npos) << table;
  EXPECT_NE(table.find("single-C"), std::string::npos) << table;
}

TEST(CapacitySources, ADegenerateEpsilonIsReportedAsClass1WithBoundsNotApplicable) {
  // 40 identical rows and 2 orthogonal ones: 780 of 861 pairs at cosine 1, the rest at 0, so
  // mu = 780/861 and sigma = sqrt(mu (1 - mu)) (population) give mu + 2 sigma ~ 1.49 > 1.
  auto rows = torch::zeros({42, 16}, torch::kDouble);
  rows.narrow(0, 0, 40).select(1, 0).fill_(1.0);
  rows[40][1] = 1.0;
  rows[41][2] = 1.0;
  EmbeddingMatrix m{rows, "degenerate", "npy", "", HeadTying::unknown};
  const auto r = capacity_report(m, CapacityOptions{});
  const double p = 780.0 / 861.0;
  EXPECT_NEAR(r.estimate.mu, p, 1e-12);
  EXPECT_GT(r.estimate.epsilon(), 1.0);
  EXPECT_EQ(r.bounds.cls, CapacityClass::class1);
  EXPECT_FALSE(r.bounds.full.defined);
  EXPECT_FALSE(r.bounds.single.defined);
  const auto j = report_json(r);
  EXPECT_EQ(j["class"], "1");
  EXPECT_EQ(j["capacity"], "indeterminate");
  EXPECT_TRUE(j["capacity_full_form"]["value"].is_null());
  EXPECT_TRUE(j["capacity_jl"]["value"].is_null());
  EXPECT_NE(j["capacity_single_constant"]["note"].get<std::string>().find("n/a"), std::string::npos);
  EXPECT_EQ(j["capacity_3sigma"]["class"], "1");
  const auto table = comparison_table({r});
  EXPECT_NE(table.find("n/a"), std::string::npos) << table;
  EXPECT_NE(table.find("outside (0, 1]"), std::string::npos) << table;
  EXPECT_EQ(format_capacity(capacity_bounds(4096, 1.2).jl), "n/a");
  EXPECT_EQ(format_capacity(capacity_bounds(4096, -0.1).full), "n/a");
}

TEST(CapacitySources, TheExaggeratedVariantUsesMuPlus3Sigma) {
  const auto b2 = capacity_bounds(4096, 0.0645), b3 = capacity_bounds(4096, 0.09);
  CapacityReport r;
  r.estimate.mu = 0.0, r.estimate.sigma = 0.0;  // only the bounds are read below
  r.bounds = b2, r.bounds_3sigma = b3;
  const auto j = report_json(r);
  EXPECT_DOUBLE_EQ(j["capacity_3sigma"]["epsilon"].get<double>(), 0.09);
  EXPECT_EQ(j["capacity_3sigma"]["capacity"], format_capacity(b3.full));
  torch::manual_seed(3);
  EmbeddingMatrix m{torch::randn({300, 512}), "mem", "npy", "", HeadTying::unknown};
  const auto full = capacity_report(m, CapacityOptions{});
  EXPECT_DOUBLE_EQ(full.bounds_3sigma.eps, full.estimate.mu + 3 * full.estimate.sigma);
}

TEST(CapacitySources, EmberFilesAreReadWithTheirOwnNames) {
  auto dir = source_scratch("ember_names");
  ember::save_safetensors(dir / "untied.safetensors", {{"embedding.weight", torch::randn({30, 8})},
                                                       {"head.weight", torch::randn({30, 8})},
                                                       {"final_norm.weight", torch::ones({8})}});
  auto m = load_embedding_matrix(dir / "untied.safetensors");
  EXPECT_EQ(m.tensor, "embedding.weight");
  EXPECT_EQ(m.head, HeadTying::untied);  // ember's dense head is head.weight
  ember::save_safetensors(dir / "tied.safetensors", {{"embedding.weight", torch::randn({30, 8})}});
  EXPECT_EQ(load_embedding_matrix(dir / "tied.safetensors").head, HeadTying::tied);
  ember::save_safetensors(dir / "lev.safetensors",
                          {{"embedding.codebooks", torch::randn({3, 4, 8})}, {"head.weight", torch::randn({30, 8})}});
  try {
    load_embedding_matrix(dir / "lev.safetensors");
    FAIL() << "a generated embedding was read as a table";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("pass its run or checkpoint directory"), std::string::npos) << e.what();
  }
}
