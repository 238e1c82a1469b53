// .npy headers from outside: what fuzz_npy found (tests/fuzz/corpus/npy/) and the cases around it.
// Every bad header is a DataError naming the file, decided before any allocation the header asks for.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "ember/io/npy.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace fs = std::filesystem;

namespace {

// A .npy file of format `version` with this header dict and `data` after it.
fs::path npy_file(const std::string& name, uint8_t version, const std::string& dict, const std::string& data,
                  uint32_t claimed_length = 0) {
  static const fs::path dir = ember::testing::scratch_dir("npy", "headers");
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(version);
  bytes += '\0';
  const uint32_t n = claimed_length ? claimed_length : static_cast<uint32_t>(dict.size());
  for (int i = 0; i < (version == 1 ? 2 : 4); ++i) bytes += static_cast<char>((n >> (8 * i)) & 0xff);
  const fs::path path = dir / name;
  std::ofstream(path, std::ios::binary) << bytes << dict << data;
  return path;
}

std::string load_error(const fs::path& path) {
  try {
    ember::load_npy(path);
  } catch (const ember::DataError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string dict_of(const std::string& shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }\n";
}

}  // namespace

TEST(Npy, ShapesAreTuplesOfSizesAndNothingElse) {
  const auto ok = ember::load_npy(npy_file("ok.npy", 1, dict_of("(2, 3)"), std::string(24, '\0')));
  EXPECT_EQ(ok.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ember::load_npy(npy_file("scalar.npy", 1, dict_of("()"), std::string(4, '\0'))).dim(), 0);
  EXPECT_EQ(ember::load_npy(npy_file("empty.npy", 1, dict_of("(0, 5)"), "")).numel(), 0);
  EXPECT_EQ(ember::load_npy(npy_file("one.npy", 1, dict_of("(4,)"), std::string(16, '\0'))).numel(), 4);
  // "(3, -4)" once read as (3, 4): the regex took the digits and dropped the sign.
  for (const std::string shape : {"(3, -4)", "(3 4)", "(3,,4)", "(1.5,)", "(x)", "(123456789012345678901234567890,)"}) {
    const auto path = npy_file("bad_shape.npy", 1, dict_of(shape), std::string(48, '\0'));
    const auto message = load_error(path);
    EXPECT_NE(message.find("is not a tuple of sizes"), std::string::npos) << shape << " -> " << message;
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  }
}

TEST(Npy, WhatAHeaderClaimsIsCheckedBeforeItIsAllocated) {
  // A version-2 header length of 4 GB (fuzz_npy's out-of-memory input asked for it).
  auto message = load_error(npy_file("long_header.npy", 2, dict_of("(2,)"), "", 0xfffffff0u));
  EXPECT_NE(message.find("header of 4294967280 bytes"), std::string::npos) << message;
  // 2^40 floats in a file of 8 data bytes.
  message = load_error(npy_file("huge_shape.npy", 1, dict_of("(1099511627776,)"), std::string(8, '\0')));
  EXPECT_NE(message.find(".npy data is truncated (8 of 4398046511104 bytes"), std::string::npos) << message;
  // A byte count past 2^64.
  message = load_error(npy_file("wraps.npy", 1, dict_of("(100000000000000000, 100000000000000000)"), ""));
  EXPECT_NE(message.find("holds more bytes than any file can"), std::string::npos) << message;
  // No bytes, but strides past 2^63: at::empty threw c10's "Stride calculation overflowed".
  message = load_error(npy_file("zero_wraps.npy", 1, dict_of("(0, 100000000000000000, 100000000000000000)"), ""));
  EXPECT_NE(message.find("holds more bytes than any file can"), std::string::npos) << message;
  message = load_error(npy_file("version9.npy", 9, dict_of("(2,)"), std::string(8, '\0')));
  EXPECT_NE(message.find("unsupported .npy format version 9"), std::string::npos) << message;
}
