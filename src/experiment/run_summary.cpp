#include "ember/experiment/run_summary.h"

#include <algorithm>
#include <cmath>

#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/suggest.h"

namespace ember {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Every key a summary may have. The first ones must be there (val_* may be null: no evaluation);
// buckets, tasks and capacity only when the run was evaluated so.
const std::vector<std::string> kRequired = {"run",     "seed",         "settings",   "params",
                                            "tokens",  "tokens_per_s", "train_loss", "val_loss",
                                            "val_ppl", "val_tokens",   "val_source"};
const std::vector<std::string> kOptional = {"buckets", "rare_bucket", "tasks", "capacity"};

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(); }  // NaN: null

Json buckets_json(const RunResult& r) {
  Json out = Json::array();
  for (const auto& b : r.buckets)
    out.push_back({{"range", b.range}, {"tokens", number(b.tokens)}, {"perplexity", b.perplexity}});
  return out;
}

// A key per line, but the histogram (2000 counts) on one.
std::string summary_text(Json j) {
  if (!j.contains("capacity") || !j["capacity"].contains("histogram")) return j.dump(2) + "\n";
  const auto counts = j["capacity"]["histogram"].dump();
  const std::string mark = "\"@histogram@\"";
  j["capacity"]["histogram"] = "@histogram@";
  auto text = j.dump(2);
  return text.replace(text.find(mark), mark.size(), counts) + "\n";
}

// Reads one summary, naming the file and the key in every error.
class SummaryReader {
 public:
  explicit SummaryReader(fs::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw UsageError("report: " + file_.string() + ": " + key + ": " + what);
  }

  const Json& at(const Json& j, const std::string& key, const std::string& where) const {
    if (!j.contains(key)) fail(where + key, "missing");
    return j.at(key);
  }

  double number(const Json& j, const std::string& key, const std::string& where = "", bool nullable = false) const {
    const auto& v = at(j, key, where);
    if (nullable && v.is_null()) return kMissing;
    if (!v.is_number()) fail(where + key, "expected a number, got " + v.dump());
    return v.get<double>();
  }

  std::string text(const Json& j, const std::string& key, const std::string& where = "") const {
    const auto& v = at(j, key, where);
    if (!v.is_string()) fail(where + key, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }

  const Json& object(const Json& j, const std::string& key) const {
    const auto& v = at(j, key, "");
    if (!v.is_object()) fail(key, "expected an object, got " + v.dump());
    return v;
  }

  void only_known_keys(const Json& j) const {
    std::vector<std::string> known = kRequired;
    known.insert(known.end(), kOptional.begin(), kOptional.end());
    for (const auto& [key, value] : j.items()) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      const auto near = closest_match(key, known);
      fail(key, "unknown key" + (near.empty() ? "" : " (did you mean '" + near + "'?)"));
    }
  }

  void read_buckets(const Json& j, RunResult& r) const {
    const auto& list = at(j, "buckets", "");
    if (!list.is_array()) fail("buckets", "expected a list, got " + list.dump());
    for (size_t i = 0; i < list.size(); ++i) {
      const auto where = "buckets[" + std::to_string(i) + "].";
      r.buckets.push_back({text(list[i], "range", where), number(list[i], "tokens", where, true),
                           number(list[i], "perplexity", where)});
    }
    if (r.buckets.empty()) return;
    r.frequent_ppl = r.buckets.back().perplexity;  // rarest first (read_run)
    const auto& rare = at(j, "rare_bucket", "");
    if (rare.is_null()) return;  // no bucket held enough tokens
    r.rare_range = text(j, "rare_bucket");
    const auto b =
        std::find_if(r.buckets.begin(), r.buckets.end(), [&](const auto& b) { return b.range == r.rare_range; });
    if (b == r.buckets.end()) fail("rare_bucket", "'" + r.rare_range + "' is none of the buckets' ranges");
    r.rare_ppl = b->perplexity;
  }

  void read_capacity(const Json& j, RunResult& r) const {
    const auto& c = object(j, "capacity");
    r.capacity_mu = number(c, "mu", "capacity."), r.capacity_epsilon = number(c, "epsilon", "capacity.");
    if (!c.contains("histogram")) return;
    try {
      r.cosine_histogram = c.at("histogram").get<std::vector<int64_t>>();
    } catch (const Json::exception&) {
      fail("capacity.histogram", "expected a list of counts");
    }
  }

  RunResult read() const {
    Json j;
    try {
      j = Json::parse(read_text_file(file_));
    } catch (const Json::exception& e) {
      throw UsageError("report: " + file_.string() + " is not JSON (" + e.what() + ")");
    }
    if (!j.is_object()) throw UsageError("report: " + file_.string() + " is not a run summary (expected an object)");
    only_known_keys(j);
    RunResult r;
    r.dir = text(j, "run");
    r.group = run_group(r.dir);
    const double seed = number(j, "seed");
    if (seed != std::floor(seed)) fail("seed", "expected an integer, got " + j.at("seed").dump());
    r.seed = static_cast<int64_t>(seed);
    for (const auto& [key, value] : object(j, "settings").items()) {
      if (!value.is_string()) fail("settings." + key, "expected a string, got " + value.dump());
      r.settings[key] = value.get<std::string>();
    }
    r.params = number(j, "params"), r.tokens = number(j, "tokens");
    r.train_loss = number(j, "train_loss"), r.tokens_per_s = number(j, "tokens_per_s");
    r.val_loss = number(j, "val_loss", "", true), r.val_ppl = number(j, "val_ppl", "", true);
    r.val_tokens = number(j, "val_tokens", "", true), r.val_source = text(j, "val_source");
    if (j.contains("buckets")) read_buckets(j, r);
    if (j.contains("tasks"))
      for (const auto& [name, value] : object(j, "tasks").items())
        r.tasks[name] = number(j.at("tasks"), name, "tasks.");
    if (j.contains("capacity")) read_capacity(j, r);
    return r;
  }

 private:
  fs::path file_;
};

}  // namespace

Json run_summary_json(const RunResult& r) {
  Json j = {{"run", r.dir.string()},        {"seed", r.seed},
            {"settings", r.settings},       {"params", r.params},
            {"tokens", r.tokens},           {"tokens_per_s", r.tokens_per_s},
            {"train_loss", r.train_loss},   {"val_loss", number(r.val_loss)},
            {"val_ppl", number(r.val_ppl)}, {"val_tokens", number(r.val_tokens)},
            {"val_source", r.val_source}};
  if (!r.buckets.empty()) {
    j["buckets"] = buckets_json(r);
    j["rare_bucket"] = r.rare_ppl >= 0 ? Json(r.rare_range) : Json();
  }
  if (!r.tasks.empty()) j["tasks"] = r.tasks;
  if (std::isfinite(r.capacity_epsilon)) {
    j["capacity"] = {{"mu", r.capacity_mu}, {"epsilon", r.capacity_epsilon}};
    if (!r.cosine_histogram.empty()) j["capacity"]["histogram"] = r.cosine_histogram;
  }
  return j;
}

fs::path write_run_summary(const RunResult& run, const fs::path& dir) {
  const auto file = dir / run_name(run.dir) / kSummaryFile;
  fs::create_directories(file.parent_path());
  write_file_atomic(file, summary_text(run_summary_json(run)));
  return file;
}

RunResult read_run_summary(const fs::path& file) {
  if (!fs::is_regular_file(file)) throw UsageError("report: " + file.string() + " not found");
  return SummaryReader(file).read();
}

bool is_run_summary(const fs::path& path) {
  if (fs::is_regular_file(path)) return true;
  return fs::is_regular_file(path / kSummaryFile) && !fs::exists(path / "config.yaml");
}

RunResult read_run_or_summary(const fs::path& path) {
  if (!is_run_summary(path)) return read_run(path);
  return read_run_summary(fs::is_directory(path) ? path / kSummaryFile : path);
}

}  // namespace ember
