#include "ember/io/tfevents.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstring>

#include "ember/util/error.h"

namespace ember {

namespace {

std::array<uint32_t, 256> crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

template <class T>
std::string little_endian(T value) {
  static_assert(std::endian::native == std::endian::little, "event files are little-endian");
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

std::string varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7F) | 0x80));
  out.push_back(static_cast<char>(v));
  return out;
}

// A length-delimited protobuf field (wire type 2).
std::string bytes_field(int number, const std::string& payload) {
  return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(payload.size()) + payload;
}

double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof(buf) - 1) == 0 ? std::string(buf) : std::string("localhost");
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const auto table = crc_table();
  uint32_t c = 0xFFFFFFFFu;
  for (const unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

namespace {
// The seconds in the newest event file name in `dir` (0: none). TensorBoard reads a run's files in
// name order, so a new file must sort after the old ones even when started within the same second.
int64_t newest_file_seconds(const std::filesystem::path& dir) {
  const std::string prefix = "events.out.tfevents.";
  int64_t newest = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    try {
      newest = std::max<int64_t>(newest, std::stoll(name.substr(prefix.size())));
    } catch (const std::exception&) {
    }
  }
  return newest;
}
}  // namespace

EventFileWriter::EventFileWriter(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const auto seconds = std::max(static_cast<int64_t>(wall_time()), newest_file_seconds(dir) + 1);
  path_ = dir / ("events.out.tfevents." + std::to_string(seconds) + "." + host_name() + "." + std::to_string(getpid()));
  out_.open(path_, std::ios::binary | std::ios::app);
  if (!out_) throw Error("cannot open '" + path_.string() + "' for writing");
  write_event(bytes_field(3, "brain.Event:2"));
}

void EventFileWriter::scalar(const std::string& tag, double value, int64_t step) {
  const std::string v = bytes_field(1, tag) + varint(2 << 3 | 5) + little_endian(static_cast<float>(value));
  write_event(varint(2 << 3) + varint(static_cast<uint64_t>(step)) + bytes_field(5, bytes_field(1, v)));
}

void EventFileWriter::restart(int64_t step) {
  write_event(varint(2 << 3) + varint(static_cast<uint64_t>(step)) + bytes_field(7, varint(1 << 3) + varint(1)));
}

void EventFileWriter::write_event(const std::string& fields) {
  const std::string event = varint(1 << 3 | 1) + little_endian(wall_time()) + fields;
  const std::string length = little_endian(static_cast<uint64_t>(event.size()));
  out_ << length << little_endian(masked_crc32c(length)) << event << little_endian(masked_crc32c(event));
  out_.flush();
  if (!out_) throw Error("cannot write '" + path_.string() + "'");
}

}  // namespace ember
