// metrics.jsonl: one JSON object per logged step or evaluation, flushed as written. On resume,
// records past the checkpoint's step are dropped so the file reads as one uninterrupted run.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace ember {

class MetricsLog {
 public:
  explicit MetricsLog(const std::filesystem::path& path);
  void truncate_after(int64_t step);  // keep records with "step" <= step
  void write(const nlohmann::json& record);

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace ember
