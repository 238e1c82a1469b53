// safetensors round trips (incl. bf16), malformed files, and readability by Python's safetensors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "ember/io/safetensors.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace fs = std::filesystem;

namespace {
// One folder per test: ctest runs the tests of this file side by side, and a shared folder emptied
// by each of them made a neighbour's remove_all fail ("Directory not empty").
fs::path tensor_file(const std::string& name) {
  static const fs::path d =
      ember::testing::scratch_dir("safetensors", ::testing::UnitTest::GetInstance()->current_test_info()->name());
  return d / name;
}
}  // namespace

TEST(Safetensors, RoundTripAllCommonDtypes) {
  torch::manual_seed(0);
  ember::TensorMap in = {{"f32", torch::randn({3, 4})},
                         {"bf16", torch::randn({5}).to(torch::kBFloat16)},
                         {"f16", torch::randn({2, 2}).to(torch::kHalf)},
                         {"f64", torch::randn({1}, torch::kDouble)},
                         {"i64", torch::arange(7)},
                         {"scalar", torch::full({}, 3.5)},
                         {"empty", torch::zeros({0, 3})}};
  auto path = tensor_file("rt.safetensors");
  ember::save_safetensors(path, in, {{"format", "pt"}});
  std::map<std::string, std::string> meta;
  auto out = ember::load_safetensors(path, &meta);
  EXPECT_EQ(meta["format"], "pt");
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) {
    EXPECT_EQ(out[name].scalar_type(), t.scalar_type()) << name;
    EXPECT_TRUE(torch::equal(out[name], t)) << name;
  }
}

TEST(Safetensors, HeaderIsAlignedJsonWithOffsets) {
  auto path = tensor_file("hdr.safetensors");
  ember::save_safetensors(path, {{"a", torch::ones({2}, torch::kBFloat16)}});
  std::ifstream f(path, std::ios::binary);
  uint64_t n = 0;
  f.read(reinterpret_cast<char*>(&n), 8);
  EXPECT_EQ(n % 8, 0u);
  std::string header(n, ' ');
  f.read(header.data(), static_cast<std::streamsize>(n));
  EXPECT_NE(header.find("\"dtype\":\"BF16\""), std::string::npos) << header;
  EXPECT_NE(header.find("\"data_offsets\":[0,4]"), std::string::npos) << header;
  EXPECT_EQ(fs::file_size(path), 8 + n + 4);
}

TEST(Safetensors, TruncatedAndGarbageFilesAreRefused) {
  auto path = tensor_file("trunc.safetensors");
  ember::save_safetensors(path, {{"w", torch::randn({64, 64})}});
  fs::resize_file(path, fs::file_size(path) - 100);
  try {
    ember::load_safetensors(path);
    FAIL() << "truncated file accepted";
  } catch (const ember::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  std::ofstream(tensor_file("junk.safetensors")) << "not a safetensors file at all";
  EXPECT_THROW(ember::load_safetensors(tensor_file("junk.safetensors")), ember::CheckpointError);
}

namespace {
// A file with this JSON header and `data_bytes` zero bytes of data.
fs::path file_with_header(const std::string& name, const std::string& json, size_t data_bytes) {
  const auto path = tensor_file(name);
  const uint64_t n = json.size();
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(&n), 8);
  f << json << std::string(data_bytes, '\0');
  return path;
}

std::string load_error(const fs::path& path) {
  try {
    ember::load_safetensors(path);
  } catch (const ember::CheckpointError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

// Found by fuzz_safetensors (tests/fuzz/corpus/safetensors/crash-*): a header entry missing a key or
// of another type escaped as nlohmann's exception, and a shape whose byte count wraps around 2^64
// could match small offsets and ask at::empty for exabytes.
TEST(Safetensors, MalformedHeaderEntriesAreCheckpointErrorsNamingTheTensor) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"x":{"dtype":"F32","shape":[4],"d.ta_offsets":[0,16]}})", "tensor 'x'"},
      {R"({"x":{"dtype":"F32","shape":4,"data_offsets":[0,16]}})", "is not a list"},
      {R"({"x":{"dtype":"F32","shape":[2.5],"data_offsets":[0,16]}})", "is not an integer"},
      {R"({"x":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", "negative dimension"},
      {R"({"x":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})", "more bytes than"},
      // 0 bytes, but LibTorch's strides overflow (found by fuzz_npy, the same check here)
      {R"({"x":{"dtype":"F32","shape":[0,4611686018427387904,4],"data_offsets":[0,0]}})", "more bytes than"},
      {R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,-16]}})", "is not [begin, end]"},
      {R"({"x":{"dtype":7,"shape":[4],"data_offsets":[0,16]}})", "tensor 'x'"},
      {R"({"x":[1,2]})", "tensor 'x'"},
      {R"({"__metadata__":{"format":7}})", "'format' is not a string"},
      {R"([1,2,3])", "not a JSON object"}};
  for (const auto& [json, expected] : cases) {
    const auto message = load_error(file_with_header("bad.safetensors", json, 16));
    EXPECT_NE(message.find(expected), std::string::npos) << json << " -> " << message;
    EXPECT_NE(message.find("bad.safetensors"), std::string::npos) << message;
  }
}

TEST(Safetensors, PythonSafetensorsReadsOurFile) {
  const char* py = std::getenv("EMBER_PYTHON");
  ASSERT_TRUE(py && *py) << "EMBER_PYTHON is not set (tests/CMakeLists.txt sets it to the venv python)";
  auto path = tensor_file("py.safetensors");
  auto w = torch::arange(12, torch::kFloat).reshape({3, 4}) / 7.0;
  auto b = (torch::arange(6, torch::kFloat) / 3.0).to(torch::kBFloat16);
  ember::save_safetensors(path, {{"w", w}, {"b", b}});
  const std::string cmd = std::string(py) +
                          " -c \"import torch; from safetensors.torch import load_file; "
                          "t = load_file('" +
                          path.string() +
                          "'); "
                          "assert torch.equal(t['w'], torch.arange(12.).reshape(3, 4) / 7.0); "
                          "assert t['b'].dtype == torch.bfloat16; "
                          "assert torch.equal(t['b'], (torch.arange(6.) / 3.0).to(torch.bfloat16))\"";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}
