// metrics.jsonl: one JSON object per logged step or evaluation, flushed as written. On resume,
// records past the checkpoint's step are dropped so the file reads as one uninterrupted run. With
// log.tensorboard, every numeric field of a record also goes to a TensorBoard event file as the
// scalar "<kind>/<field>" (train/loss, eval/val_loss, capacity/input_epsilon, ...); a resume starts
// a new file that tells TensorBoard to drop the old file's steps after the checkpoint.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>

#include "ember/io/tfevents.h"

namespace ember {

class MetricsLog {
 public:
  // tensorboard_dir empty: no event file.
  explicit MetricsLog(const std::filesystem::path& path, const std::filesystem::path& tensorboard_dir = {});
  void truncate_after(int64_t step);  // keep records with "step" <= step
  void write(const nlohmann::json& record);

 private:
  std::filesystem::path path_;
  std::ofstream out_;
  std::unique_ptr<EventFileWriter> tensorboard_;
};

}  // namespace ember
