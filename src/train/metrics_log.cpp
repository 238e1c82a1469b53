#include "ember/train/metrics_log.h"

#include <sstream>

#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {

MetricsLog::MetricsLog(const std::filesystem::path& path, const std::filesystem::path& tensorboard_dir) : path_(path) {
  out_.open(path_, std::ios::app);
  if (!out_) throw Error("cannot open '" + path_.string() + "' for writing");
  if (!tensorboard_dir.empty()) tensorboard_ = std::make_unique<EventFileWriter>(tensorboard_dir);
}

void MetricsLog::truncate_after(int64_t step) {
  out_.close();
  std::string kept;
  if (std::filesystem::exists(path_)) {
    std::istringstream lines(read_text_file(path_));
    std::string line;
    while (std::getline(lines, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;  // a line cut short by a kill
      if (j.value("step", int64_t{0}) <= step) kept += line + "\n";
    }
  }
  write_file_atomic(path_, kept);
  out_.open(path_, std::ios::app);
  if (tensorboard_ && step >= 0) tensorboard_->restart(step + 1);  // the steps this run logs again
}

void MetricsLog::write(const nlohmann::json& record) {
  out_ << record.dump() << "\n";
  out_.flush();
  if (!tensorboard_) return;
  const std::string kind = record.value("kind", std::string("metrics"));
  const int64_t step = record.value("step", int64_t{0});
  for (const auto& [key, value] : record.items())
    if (value.is_number() && key != "step") tensorboard_->scalar(kind + "/" + key, value.get<double>(), step);
}

}  // namespace ember
