#include "ember/experiment/run_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "ember/analysis/plot_output.h"
#include "ember/run/run_config.h"
#include "ember/experiment/paired_report.h"
#include "ember/experiment/report_figures.h"
#include "ember/model/summary.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember {
namespace {

void flatten(const YAML::Node& n, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n)
      flatten(kv.second, prefix.empty() ? kv.first.Scalar() : prefix + "." + kv.first.Scalar(), out);
    return;
  }
  YAML::Emitter e;
  e << YAML::Flow << n;
  out[prefix] = e.c_str();
}

std::vector<nlohmann::json> read_metrics(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw UsageError("report: " + file.string() + " not found (is it a run directory?)");
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) try {
        records.push_back(nlohmann::json::parse(line));
      } catch (const nlohmann::json::exception&) {  // a line cut by a crash: the rest stands
      }
  return records;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The "rare" bucket of the report: the rarest with at least min(1000, 10% of the evaluated) tokens,
// so a handful of tokens (whose perplexity is uncertain by a factor of several) does not stand
// for the rare vocabulary; the "frequent" one: the most frequent non-empty bucket.
constexpr double kRareBucketTokens = 1000;

void read_buckets(const nlohmann::json& buckets, RunResult& r) {
  double total = 0;
  for (const auto& b : buckets) total += b.at("tokens").get<double>();
  const double enough = std::min(kRareBucketTokens, 0.1 * total);
  for (const auto& b : buckets) {  // ordered from the rarest tokens to the most frequent
    const double tokens = b.at("tokens").get<double>();
    if (tokens == 0) continue;
    const auto range = b.value("range", fmt::format("bucket {}", r.buckets.size() + 1));  // as ember eval names it
    r.buckets.push_back({range, tokens, b.at("perplexity").get<double>()});
    if (r.rare_ppl < 0 && tokens >= enough) r.rare_ppl = b.at("perplexity").get<double>(), r.rare_range = range;
    r.frequent_ppl = b.at("perplexity").get<double>();
  }
}

template <class Get>
Stat pooled(const std::vector<const RunResult*>& runs, Get get) {
  std::vector<double> v;
  for (const auto* r : runs) v.push_back(get(*r));
  return stat_of(v);
}

std::string shown(const Stat& s, const char* format, size_t n) {
  if (!std::isfinite(s.mean)) return "n/a";  // a run without the record
  auto text = fmt::format(fmt::runtime(format), s.mean);
  return n > 1 ? text + " ± " + fmt::format(fmt::runtime(format), s.std) : text;
}

std::string percent(double change) { return std::isfinite(change) ? fmt::format("{:+.1f}%", change) : "n/a"; }

}  // namespace

std::string run_name(const fs::path& dir) {
  auto normal = dir.lexically_normal();
  return (normal.has_filename() ? normal : normal.parent_path()).filename().string();
}

std::string run_group(const fs::path& dir) {
  return std::regex_replace(run_name(dir), std::regex("_seed-?[0-9]+$"), "");
}

Stat stat_of(const std::vector<double>& v) {
  Stat s;
  for (double x : v) s.mean += x / static_cast<double>(v.size());
  if (v.size() < 2) return s;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / static_cast<double>(v.size() - 1));
  return s;
}

RunResult read_run(const fs::path& dir) {
  RunResult r;
  r.dir = dir;
  const auto config_file = dir / "config.yaml";
  if (!fs::is_regular_file(config_file))
    throw UsageError("report: " + config_file.string() + " not found (is it a run directory?)");
  const auto cfg = load_config({config_file.string()}, {});
  flatten(YAML::LoadFile(config_file.string()), "", r.settings);
  r.seed = cfg.train.seed;
  r.group = run_group(dir);
  r.params = static_cast<double>(summarize_model(cfg.model, cfg.train.seq_len).total_params);
  std::vector<double> rates;
  for (const auto& m : read_metrics(dir / "metrics.jsonl")) {
    const auto kind = m.value("kind", "");
    if (kind == "train") {
      r.steps = m.at("step").get<double>(), r.tokens = m.at("tokens").get<double>();
      r.train_loss = m.at("loss").get<double>();
      r.train_curve.emplace_back(r.tokens, r.train_loss);
      rates.push_back(m.at("tokens_per_s").get<double>());
    } else if (kind == "eval") {
      r.val_loss = m.at("val_loss").get<double>(), r.val_ppl = m.at("val_ppl").get<double>();
      r.val_tokens = m.value("val_tokens", kMissing), r.val_source = "metrics.jsonl";
      r.val_curve.emplace_back(m.at("step").get<double>(), r.val_loss);
    } else if (kind == "capacity" && m.contains("input_epsilon")) {
      r.tied = m.value("tied", false);
      r.epsilon_curve.push_back({m.at("step").get<double>(), m.at("input_epsilon").get<double>(),
                                 m.value("head_epsilon", m.at("input_epsilon").get<double>())});
    }
  }
  if (rates.empty()) throw UsageError("report: " + (dir / "metrics.jsonl").string() + " has no training records");
  for (auto& point : r.val_curve) point.first *= r.tokens / r.steps;  // steps -> tokens
  for (auto& point : r.epsilon_curve) point.tokens *= r.tokens / r.steps;
  r.tokens_per_s = median(std::vector<double>(rates.begin() + static_cast<long>(rates.size() / 2), rates.end()));
  if (fs::is_regular_file(dir / "eval.json")) {  // the sweep's full evaluation of the final checkpoint
    const auto ev = nlohmann::json::parse(read_text_file(dir / "eval.json"));
    r.val_loss = ev.at("loss").get<double>(), r.val_ppl = ev.at("perplexity").get<double>();
    r.val_tokens = ev.value("tokens", kMissing), r.val_source = "eval.json";
    if (ev.contains("buckets")) read_buckets(ev.at("buckets"), r);
    if (ev.contains("capacity") && ev.at("capacity").contains("histogram")) {
      const auto& c = ev.at("capacity");
      r.cosine_histogram = c.at("histogram").get<std::vector<int64_t>>();
      r.capacity_mu = c.at("mu").get<double>(), r.capacity_epsilon = c.at("epsilon").get<double>();
    }
    if (ev.contains("tasks"))
      for (const auto& [name, t] : ev.at("tasks").items()) {
        r.tasks[name + " acc"] = t.at("accuracy").get<double>();
        if (t.contains("accuracy_norm")) r.tasks[name + " acc_norm"] = t.at("accuracy_norm").get<double>();
      }
  }
  return r;
}

// Validation numbers compare only over the same tokens: a run's last logged evaluation (eval.batches)
// against another's full pass (eval.json) is said plainly.
std::vector<std::string> evaluation_mismatches(const std::vector<RunResult>& runs) {
  std::map<double, std::vector<std::string>> by_tokens;
  for (const auto& r : runs)
    if (std::isfinite(r.val_tokens))
      by_tokens[r.val_tokens].push_back(fmt::format("{} ({})", run_name(r.dir), r.val_source));
  if (by_tokens.size() < 2) return {};
  std::vector<std::string> groups;
  for (const auto& [tokens, names] : by_tokens)
    groups.push_back(fmt::format("{:.0f} tokens: {}", tokens, fmt::join(names, ", ")));
  return {
      fmt::format("validation numbers come from evaluations of different sizes ({}); they do not compare "
                  "exactly (evaluate every run alike, e.g. ember eval --batches 0 --json > RUN/eval.json)",
                  fmt::join(groups, "; "))};
}

namespace {

// One row of the table from the runs it pools (a member's seeds, or one run of them).
ReportRow pooled_row(const std::string& name, const std::vector<const RunResult*>& g,
                     const std::vector<std::string>& varied) {
  ReportRow row;
  row.member = name;
  for (const auto* r : g) row.runs.push_back(r->dir);
  for (const auto& key : varied) row.settings[key] = g.front()->settings.count(key) ? g.front()->settings.at(key) : "";
  row.params = pooled(g, [](const RunResult& r) { return r.params; });
  row.tokens = pooled(g, [](const RunResult& r) { return r.tokens; });
  row.train_loss = pooled(g, [](const RunResult& r) { return r.train_loss; });
  row.val_loss = pooled(g, [](const RunResult& r) { return r.val_loss; });
  row.val_tokens = pooled(g, [](const RunResult& r) { return r.val_tokens; });
  row.val_ppl = pooled(g, [](const RunResult& r) { return r.val_ppl; });
  row.tokens_per_s = pooled(g, [](const RunResult& r) { return r.tokens_per_s; });
  row.has_buckets = std::all_of(g.begin(), g.end(), [](const RunResult* r) { return r->rare_ppl >= 0; });
  for (const auto& entry : g.front()->tasks) {
    const std::string& task = entry.first;  // captured below: clang 14 cannot capture a structured binding
    if (std::all_of(g.begin(), g.end(), [&](const RunResult* r) { return r->tasks.count(task) > 0; }))
      row.tasks[task] = pooled(g, [&](const RunResult& r) { return r.tasks.at(task); });
  }
  if (row.has_buckets) {
    row.rare_ppl = pooled(g, [](const RunResult& r) { return r.rare_ppl; });
    row.frequent_ppl = pooled(g, [](const RunResult& r) { return r.frequent_ppl; });
  }
  for (const auto* r : g) row.seeds.push_back(r->seed);
  std::sort(row.seeds.begin(), row.seeds.end());
  row.seeds.erase(std::unique(row.seeds.begin(), row.seeds.end()), row.seeds.end());
  return row;
}

std::string bucket_metric(const std::string& range) { return "ppl " + range; }

// A run's value of one of Report::metrics; NaN when the run lacks it.
double metric_value(const RunResult& r, const std::string& metric) {
  if (metric == "val_loss") return r.val_loss;
  if (metric == "val_ppl") return r.val_ppl;
  if (metric == "train_loss") return r.train_loss;
  if (metric == kInputMu) return r.capacity_mu;  // the exact capacity evaluation of the final input table
  if (metric == kInputEpsilon) return r.capacity_epsilon;
  for (const auto& b : r.buckets)
    if (bucket_metric(b.range) == metric) return b.perplexity;
  const auto task = r.tasks.find(metric);
  return task != r.tasks.end() ? task->second : kMissing;
}

std::vector<std::string> paired_metrics(const std::vector<RunResult>& runs, const std::vector<std::string>& tasks) {
  std::vector<std::string> metrics = {"val_loss", "val_ppl"};
  for (const auto& r : runs)  // the buckets in the order the runs have them, rarest first
    for (const auto& b : r.buckets)
      if (std::find(metrics.begin(), metrics.end(), bucket_metric(b.range)) == metrics.end())
        metrics.push_back(bucket_metric(b.range));
  metrics.insert(metrics.end(), tasks.begin(), tasks.end());
  metrics.push_back("train_loss");
  if (std::any_of(runs.begin(), runs.end(), [](const RunResult& r) { return std::isfinite(r.capacity_epsilon); }))
    metrics.insert(metrics.end(), {kInputMu, kInputEpsilon});
  return metrics;
}

void pool_metric_values(ReportRow& row, const std::vector<const RunResult*>& g, const std::vector<std::string>& metrics) {
  for (const auto& m : metrics)
    if (std::all_of(g.begin(), g.end(), [&](const RunResult* r) { return std::isfinite(metric_value(*r, m)); }))
      row.values[m] = pooled(g, [&](const RunResult& r) { return metric_value(r, m); });
}

// The member's row and one row per run, ascending seed. Two runs of one member with the same seed
// are named in a warning: the pairing uses the first.
ReportRow member_row(const std::string& name, std::vector<const RunResult*> g, const Report& report) {
  auto row = pooled_row(name, g, report.varied);
  pool_metric_values(row, g, report.metrics);
  std::stable_sort(g.begin(), g.end(), [](const RunResult* a, const RunResult* b) { return a->seed < b->seed; });
  for (const auto* r : g) {
    auto seed_row = pooled_row(name, {r}, report.varied);
    pool_metric_values(seed_row, {r}, report.metrics);
    seed_row.seed = r->seed;
    row.seed_rows.push_back(std::move(seed_row));
  }
  return row;
}

std::vector<std::string> duplicate_seeds(const std::map<std::string, std::vector<const RunResult*>>& groups) {
  std::vector<std::string> warnings;
  for (const auto& [name, g] : groups) {
    std::map<int64_t, std::vector<std::string>> by_seed;
    for (const auto* r : g) by_seed[r->seed].push_back(run_name(r->dir));
    for (const auto& [seed, names] : by_seed)
      if (names.size() > 1)
        warnings.push_back(fmt::format("member '{}' has {} runs with train.seed {} ({}); the paired differences "
                                       "use the first",
                                       name, names.size(), seed, fmt::join(names, ", ")));
  }
  return warnings;
}

}  // namespace

Report make_report(const std::vector<RunResult>& runs, const std::string& baseline, Correction correction) {
  if (runs.empty()) throw UsageError("report: no runs given");
  Report report;
  report.correction = correction;
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RunResult*>> groups;
  for (const auto& r : runs) {
    if (!groups.count(r.group)) order.push_back(r.group);
    groups[r.group].push_back(&r);
  }
  report.baseline = baseline.empty() ? order.front() : baseline;
  report.rare_range = runs.front().rare_range;
  if (!groups.count(report.baseline))
    throw UsageError("report: --baseline '" + report.baseline + "' is none of the members (" +
                     fmt::format("{}", fmt::join(order, ", ")) + ")");
  // Settings on which runs that have them disagree (seed, the run's name and place excluded; a
  // key only some runs have, like a mixer kind's own section, follows from another that differs).
  const std::set<std::string> ignored = {"train.seed", "log.name", "log.dir"};
  std::map<std::string, std::set<std::string>> values;
  for (const auto& r : runs)
    for (const auto& [key, value] : r.settings) values[key].insert(value);
  for (const auto& [key, seen] : values)
    if (seen.size() > 1 && !ignored.count(key)) report.varied.push_back(key);
  // The tasks every run of every member has.
  for (const auto& entry : runs.front().tasks) {
    const std::string& task = entry.first;  // captured below: clang 14 cannot capture a structured binding
    if (std::all_of(runs.begin(), runs.end(), [&](const RunResult& r) { return r.tasks.count(task) > 0; }))
      report.tasks.push_back(task);
  }
  report.metrics = paired_metrics(runs, report.tasks);
  for (const auto& name : order) report.rows.push_back(member_row(name, groups[name], report));
  const auto& base = *std::find_if(report.rows.begin(), report.rows.end(),
                                   [&](const ReportRow& r) { return r.member == report.baseline; });
  report.warnings = evaluation_mismatches(runs);
  for (const auto& w : duplicate_seeds(groups)) report.warnings.push_back(w);
  for (auto& row : report.rows) {
    row.val_ppl_change = 100.0 * (row.val_ppl.mean - base.val_ppl.mean) / base.val_ppl.mean;
    if (row.has_buckets && base.has_buckets)
      row.rare_ppl_change = 100.0 * (row.rare_ppl.mean - base.rare_ppl.mean) / base.rare_ppl.mean;
  }
  pair_with_baseline(report);
  return report;
}

// The final input embeddings' exact mu and epsilon (evals: [capacity]) per member, when measured.
std::string geometry_markdown(const Report& report) {
  if (std::find(report.metrics.begin(), report.metrics.end(), kInputEpsilon) == report.metrics.end()) return "";
  std::ostringstream md;
  md << "Final input embeddings (the exact pairwise cosines of the capacity evaluation):\n\n"
     << "| member | input mu | input epsilon |\n|---|---|---|\n";
  for (const auto& r : report.rows) {
    const auto mu = r.values.find(kInputMu), eps = r.values.find(kInputEpsilon);
    if (mu == r.values.end() || eps == r.values.end()) continue;
    md << fmt::format("| {} | {} | {} |\n", r.member, shown(mu->second, "{:.4f}", r.runs.size()),
                      shown(eps->second, "{:.4f}", r.runs.size()));
  }
  return md.str() + "\n";
}

std::string report_markdown(const Report& report) {
  const bool buckets =
      std::all_of(report.rows.begin(), report.rows.end(), [](const ReportRow& r) { return r.has_buckets; });
  std::ostringstream md;
  md << "# Report\n\nBaseline: `" << report.baseline << "`. Values are means over a member's seeds (± sample "
     << "standard deviation when there are several); changes are relative to the baseline's mean.\n\n";
  if (buckets && !report.rare_range.empty())
    md << "Rare bucket: tokens of training-data frequency `" << report.rare_range << "` (the rarest bucket with at "
       << "least min(1000, 10% of the evaluated) tokens); frequent bucket: the most frequent one.\n\n";
  for (const auto& w : report.warnings) md << "**Warning:** " << w << ".\n\n";
  md << "| member |";
  for (const auto& key : report.varied) md << " " << key << " |";
  md << " seeds | params | tokens | train loss | val tokens | val loss | val ppl | val ppl vs baseline |";
  if (buckets) md << " rare-bucket ppl | rare vs baseline | frequent-bucket ppl |";
  for (const auto& task : report.tasks) md << " " << task << " |";
  md << " tokens/s |\n|---|";
  for (size_t i = 0; i < report.varied.size() + 9 + (buckets ? 3 : 0) + report.tasks.size(); ++i) md << "---|";
  md << "\n";
  for (const auto& r : report.rows) {
    const size_t n = r.runs.size();
    md << "| " << r.member << " |";
    for (const auto& key : report.varied) md << " " << r.settings.at(key) << " |";
    md << fmt::format(" {} | {:.0f} | {:.0f} | {} | {} | {} | {} | {} |", n, r.params.mean, r.tokens.mean,
                      shown(r.train_loss, "{:.4f}", n), shown(r.val_tokens, "{:.0f}", 1),
                      shown(r.val_loss, "{:.4f}", n), shown(r.val_ppl, "{:.3f}", n), percent(r.val_ppl_change));
    if (buckets)
      md << fmt::format(" {} | {} | {} |", shown(r.rare_ppl, "{:.3f}", n), percent(r.rare_ppl_change),
                        shown(r.frequent_ppl, "{:.3f}", n));
    for (const auto& task : report.tasks) md << " " << shown(r.tasks.at(task), "{:.4f}", n) << " |";
    md << fmt::format(" {:.0f} |\n", r.tokens_per_s.mean);
  }
  md << "\n" << geometry_markdown(report);
  for (const auto& r : report.rows) {
    if (r.member == report.baseline) continue;
    md << "- " << r.member << " vs " << report.baseline << ": " << percent(r.val_ppl_change) << " val ppl";
    if (buckets) md << ", " << percent(r.rare_ppl_change) << " rare-bucket ppl";
    md << "\n";
  }
  md << paired_markdown(report);
  return md.str();
}

void write_report(const Report& report, const std::vector<RunResult>& runs, const fs::path& dir) {
  fs::create_directories(dir);
  std::vector<ReportFigure> figures;
  if (plotting_available()) figures = write_report_figures(report, runs, dir);
  write_file_atomic(dir / "report.md", report_markdown(report) + figures_markdown(figures));
  write_file_atomic(dir / "report.csv", report_csv(report));
}

}  // namespace ember
