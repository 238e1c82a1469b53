// TensorBoard event files (io/tfevents.h): CRC-32C against the published check values, and the
// TFRecord framing of a written file walked record by record with every checksum verified.
// tests/integration/tensorboard.sh reads the files with TensorBoard itself.
#include <gtest/gtest.h>

#include <cstring>

#include "ember/io/tfevents.h"
#include "ember/util/files.h"
#include "scratch.h"

TEST(TfEvents, Crc32cCheckValues) {
  EXPECT_EQ(ember::crc32c("123456789"), 0xE3069283u);           // the CRC catalogue's check value
  EXPECT_EQ(ember::crc32c(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720 B.4: 32 bytes of zeros
  EXPECT_EQ(ember::crc32c(std::string(32, '\xFF')), 0x62A8AB43u);  // and of 0xFF
  EXPECT_EQ(ember::crc32c(""), 0u);
}

TEST(TfEvents, RecordsAreFramedWithMaskedChecksums) {
  const auto dir = ember::testing::scratch_dir("tfevents", "records");
  std::filesystem::path file;
  {
    ember::EventFileWriter w(dir / "tb");
    w.scalar("train/loss", 2.5, 10);
    w.scalar("eval/val_loss", 2.25, 10);
    w.restart(11);
    file = w.path();
  }
  EXPECT_EQ(file.filename().string().rfind("events.out.tfevents.", 0), 0u);
  const std::string bytes = ember::read_text_file(file);
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  size_t at = 0, records = 0;
  while (at < bytes.size()) {
    ASSERT_LE(at + 12, bytes.size());
    uint64_t length;
    std::memcpy(&length, bytes.data() + at, 8);
    EXPECT_EQ(u32(at + 8), ember::masked_crc32c(std::string_view(bytes).substr(at, 8)));
    ASSERT_LE(at + 12 + length + 4, bytes.size());
    EXPECT_EQ(u32(at + 12 + length), ember::masked_crc32c(std::string_view(bytes).substr(at + 12, length)));
    at += 12 + length + 4;
    ++records;
  }
  EXPECT_EQ(records, 4u);  // file version, two scalars, the restart
  EXPECT_NE(bytes.find("brain.Event:2"), std::string::npos);
  EXPECT_NE(bytes.find("eval/val_loss"), std::string::npos);
}

TEST(TfEvents, ANewSessionsFileSortsAfterTheOldOnes) {
  const auto dir = ember::testing::scratch_dir("tfevents", "order");
  const auto first = ember::EventFileWriter(dir).path(), second = ember::EventFileWriter(dir).path();
  EXPECT_LT(first.filename().string(), second.filename().string());  // TensorBoard reads in name order
}
