// Shards tokenized elsewhere: .npy token arrays and headerless nanoGPT uint16 files.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "ember/data/shard.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace fs = std::filesystem;

namespace {

fs::path shard_scratch(const std::string& name) { return ember::testing::scratch_dir("shard_formats", name); }

// A version-1 .npy file as NumPy writes it: magic, version, header length, padded dict, data.
template <class T>
void write_npy(const fs::path& path, const std::string& descr, const std::string& shape, const std::vector<T>& data) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(dict.size());
  out.write(reinterpret_cast<const char*>(&len), 2);
  out << dict;
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(T)));
}

}  // namespace

TEST(ShardFormats, NpyArrays) {
  const fs::path d = shard_scratch("npy");
  write_npy<uint16_t>(d / "a.npy", "<u2", "(5,)", {1, 2, 3, 4, 65535});
  write_npy<uint32_t>(d / "b.npy", "<u4", "(3,)", {7, 70000, 9});
  const auto paths = ember::resolve_shards({d.string()}, "data.train");
  ASSERT_EQ(paths.size(), 2u);
  ember::ShardFile a(paths[0]), b(paths[1]);
  EXPECT_EQ(a.size(), 5);
  EXPECT_EQ(a.token(4), 65535u);
  EXPECT_EQ(b.bytes_per_token(), 4);
  EXPECT_EQ(b.token(1), 70000u);
  write_npy<uint16_t>(d / "c.npy", "<u2", "(2, 2)", {1, 2, 3, 4});
  EXPECT_THROW(ember::ShardFile(d / "c.npy"), ember::DataError);
  write_npy<float>(d / "d.npy", "<f4", "(1,)", {1.0f});
  EXPECT_THROW(ember::ShardFile(d / "d.npy"), ember::DataError);
}

std::string error_of(const fs::path& p) {
  try {
    ember::ShardFile f(p);
  } catch (const ember::DataError& e) {
    return e.what();
  }
  return "";
}

TEST(ShardFormats, NpyErrorsNameTheShardAndTheProblem) {
  const fs::path d = shard_scratch("npy_errors");
  write_npy<int32_t>(d / "ok.npy", "<i4", "(2,)", {5, 6});
  EXPECT_EQ(ember::ShardFile(d / "ok.npy").token(1), 6u);
  write_npy<uint16_t>(d / "matrix.npy", "<u2", "(2, 2)", {1, 2, 3, 4});
  EXPECT_NE(error_of(d / "matrix.npy").find("matrix.npy': .npy shape has 2 dimensions"), std::string::npos);
  write_npy<uint16_t>(d / "big.npy", ">u2", "(1,)", {1});
  EXPECT_NE(error_of(d / "big.npy").find(".npy dtype '>u2'"), std::string::npos);
  write_npy<float>(d / "float.npy", "<f4", "(1,)", {1.0f});
  EXPECT_NE(error_of(d / "float.npy").find(".npy dtype '<f4'"), std::string::npos);
  std::ofstream(d / "cut.npy", std::ios::binary).write("\x93NUMPY\x01\x00\x76\x00{'descr", 17);
  EXPECT_NE(error_of(d / "cut.npy").find("cut.npy': truncated .npy header"), std::string::npos);
  std::ofstream(d / "fake.npy", std::ios::binary) << "PK\x03\x04 not numpy at all";
  EXPECT_NE(error_of(d / "fake.npy").find("fake.npy': not a .npy file"), std::string::npos);
}

TEST(ShardFormats, HeaderlessNanoGpt) {
  const fs::path d = shard_scratch("nanogpt");
  std::vector<uint16_t> tokens(1000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint16_t>(i * 7);
  std::ofstream(d / "train.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size() * 2));
  const auto paths = ember::resolve_shards({"nanogpt:" + (d / "*.bin").string()}, "data.train");
  ASSERT_EQ(paths.size(), 1u);
  ember::ShardFile f(paths[0]);
  EXPECT_EQ(f.size(), 1000);
  EXPECT_EQ(f.token(999), 6993u);
  EXPECT_EQ(f.path(), d / "train.bin");
  try {
    ember::ShardFile plain(d / "train.bin");  // without the prefix: the llm.c header is expected
    FAIL() << "expected DataError";
  } catch (const ember::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("needs the prefix nanogpt:"), std::string::npos) << e.what();
  }
}
