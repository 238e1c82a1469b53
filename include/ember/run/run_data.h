// Where a run's data is, from any working directory. When training starts, data.train and data.val
// are made absolute (config.yaml holds them so) and data.json beside config.yaml records, for each
// split, the directory of its manifest.json (the first shard's), that manifest's sha256, and the
// tokenizer it names (so that tasks and generation need no shard). A split is found
//   1. as written in config.yaml: absolute, or relative to the current directory;
//   2. for a relative path (a run from before data.json): from each directory above the run
//      directory, nearest first;
//   3. moved: EMBER_DATA_DIR names the directory that holds the data set now; the recorded
//      directory in each path is replaced by it, and its manifest.json must have the recorded
//      sha256 (another data set is refused, naming both paths and hashes).
// A split that is not found is a DataError that says why it was wanted and where it looked.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ember/data/data_config.h"
#include "ember/data/text_encoder.h"

namespace ember {

constexpr const char* kDataDirEnv = "EMBER_DATA_DIR";

// `data` with every relative path (and nanogpt: path) taken from `base`, lexically normal.
DataConfig absolute_data_paths(const DataConfig& data, const std::filesystem::path& base);

// One split as data.json records it.
struct SplitRecord {
  std::filesystem::path dir;    // where its manifest.json is (or would be): the first shard's directory
  std::string manifest_sha256;  // "" when the split had no manifest.json
};

struct RunDataRecord {
  std::map<std::string, SplitRecord> splits;            // "train", "val"
  nlohmann::json tokenizer = nlohmann::json::object();  // the manifest's tokenizer keys
  std::filesystem::path tokenizer_manifest;             // the manifest they came from
};

// The record of `data` (absolute paths, shards present), as the trainer writes it when it starts.
RunDataRecord describe_run_data(const DataConfig& data);
void write_run_data(const std::filesystem::path& run_dir, const RunDataRecord& record);  // data.json
// data.json of `run_dir`; nullopt for a run without one. DataError naming the file when malformed.
std::optional<RunDataRecord> read_run_data(const std::filesystem::path& run_dir);

class RunData {
 public:
  // `data`: the run's config.yaml section; `moved_to`: EMBER_DATA_DIR ("" when unset).
  RunData(std::filesystem::path run_dir, DataConfig data, std::filesystem::path moved_to);
  RunData(std::filesystem::path run_dir, DataConfig data);  // moved_to from EMBER_DATA_DIR

  bool has_train() const { return !data_.train.empty(); }
  bool has_val() const { return !data_.val.empty(); }
  // The split's shard specs where they are now; `why` opens the error ("frequency buckets need
  // the training shards").
  std::vector<std::string> train(const std::string& why) const;
  std::vector<std::string> val(const std::string& why) const;
  // The tokenizer the run's data was prepared with: from its manifest when the data is found, else
  // as data.json recorded it.
  TextEncoder encoder() const;
  std::optional<DatasetTokenizer> tokenizer() const;  // nullopt: unknown (nothing to compare)

 private:
  std::vector<std::string> locate(const std::string& split, const std::vector<std::string>& specs,
                                  const std::string& why) const;
  std::optional<std::vector<std::string>> relocate(const std::string& split, const std::vector<std::string>& specs,
                                                   const std::string& key) const;
  std::optional<std::pair<std::string, std::vector<std::string>>> found_split() const;
  std::filesystem::path run_dir_;
  DataConfig data_;
  std::filesystem::path moved_to_;
  std::optional<RunDataRecord> record_;
};

}  // namespace ember
