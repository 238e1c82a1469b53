// TensorBoard event files (events.out.tfevents.<seconds>.<host>.<pid>): TFRecord framing (the
// length as uint64, its masked CRC-32C, the record, the record's masked CRC-32C) around Event
// protocol buffers, written by hand: wall_time (1, double), step (2, int64), file_version (3,
// "brain.Event:2"), summary (5: Summary.value (1): tag (1), simple_value (2, float)), session_log
// (7: status (1) = START). Readable by TensorBoard and anything that reads its files.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace ember {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), and TFRecord's mask of it.
uint32_t crc32c(std::string_view bytes);
uint32_t masked_crc32c(std::string_view bytes);

class EventFileWriter {
 public:
  // Creates a new event file in `dir` (made if absent), named to sort after the files already
  // there; the first record names the file version.
  explicit EventFileWriter(const std::filesystem::path& dir);
  void scalar(const std::string& tag, double value, int64_t step);
  // A SessionLog START at `step`: TensorBoard drops the events of earlier files at this step and
  // later ones (a run resumed from a checkpoint before them).
  void restart(int64_t step);
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_event(const std::string& fields);  // the Event's fields after wall_time
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace ember
