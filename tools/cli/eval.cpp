#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <regex>

#include "cli/commands.h"
#include "ember/data/loader.h"
#include "ember/data/text_encoder.h"
#include "ember/data/token_counts.h"
#include "ember/eval/frequency_buckets.h"
#include "ember/eval/recall_scoring.h"
#include "ember/eval/perplexity.h"
#include "ember/eval/task_kind.h"
#include "ember/eval/task_scoring.h"
#include "ember/io/safetensors.h"
#include "ember/run/model_loader.h"
#include "ember/run/run_data.h"
#include "ember/util/error.h"

namespace ember::cli {
namespace {

struct EvalArgs {
  std::string path;
  std::vector<std::string> data;
  int64_t batches = -1;
  bool json = false;
  std::string device = "auto";
  std::string precision;  // "": the run's train.precision
  bool buckets = false;
  std::vector<double> edges = default_bucket_edges();
  std::vector<std::string> task;  // {kind, file}
  int64_t limit = 0;
  std::string logits;  // write the first batch's inputs and logits here
};

// --logits FILE: the first evaluation batch's inputs and targets [B, T] and fp32 logits [B, T, V] as a
// safetensors file, for comparing with another implementation.
void write_first_batch_logits(LanguageModel& model, BatchLoader& loader, const at::Device& device,
                              const std::string& file) {
  for_each_eval_batch(loader, 1, device, [&](const at::Tensor& x, const at::Tensor& y) {
    save_safetensors(file,
                     {{"inputs", x.cpu().contiguous()},
                      {"targets", y.cpu().contiguous()},
                      {"logits", model.forward(x).to(at::kFloat).cpu().contiguous()}},
                     {{"format", "pt"}});
  });
}

TaskKind task_kind_of(const std::string& name) {
  TaskKind kind{};
  if (!enum_from_name(name, kind))
    throw UsageError("eval: --task '" + name + "' is unknown (tasks: choice FILE.jsonl, lambada FILE, recall FILE.jsonl)");
  return kind;
}

// --task choice|lambada|recall FILE: the task's accuracy instead of perplexity.
void run_task(const EvalArgs& args, LoadedModel& loaded, const at::Device& device) {
  const std::string &kind = args.task[0], &file = args.task[1];
  auto cap = [&](auto items) {
    if (args.limit > 0 && static_cast<int64_t>(items.size()) > args.limit)
      items.resize(static_cast<size_t>(args.limit));
    return items;
  };
  nlohmann::json j = {
      {"checkpoint", loaded.checkpoint_dir.string()}, {"step", loaded.step}, {"task", kind}, {"file", file}};
  const TaskKind task = task_kind_of(kind);
  if (task == TaskKind::recall) {  // token ids: no tokenizer
    const auto tally = score_recall_task(*loaded.model, cap(read_recall_items(file)), device);
    j.update({{"items", tally.items}, {"answers", tally.answers}, {"accuracy", tally.accuracy()}});
    if (!args.json)
      std::cout << fmt::format("{}: recall accuracy {:.4f} over {} answers in {} items\n", file, tally.accuracy(),
                               tally.answers, tally.items);
    if (args.json) std::cout << j.dump() << "\n";
    return;
  }
  const TextEncoder encoder = RunData(loaded.run_dir, loaded.config.data).encoder();
  if (task == TaskKind::choice) {
    const auto tally = score_choice_task(*loaded.model, encoder, cap(read_choice_items(file)), device);
    j.update({{"items", tally.items}, {"accuracy", tally.accuracy()}, {"accuracy_norm", tally.accuracy_norm()}});
    if (!args.json)
      std::cout << fmt::format("{}: accuracy {:.4f}, length-normalised accuracy {:.4f} over {} items\n", file,
                               tally.accuracy(), tally.accuracy_norm(), tally.items);
  } else {
    const auto tally = score_lambada_task(*loaded.model, encoder, cap(read_lambada_items(file)), device);
    j.update({{"items", tally.items}, {"accuracy", tally.accuracy()}, {"perplexity", tally.perplexity()}});
    if (!args.json)
      std::cout << fmt::format("{}: last-word accuracy {:.4f} over {} items, target-word perplexity {:.3f}\n", file,
                               tally.accuracy(), tally.items, tally.perplexity());
  }
  if (args.json) std::cout << j.dump() << "\n";
}

std::string frequency_range(const FrequencyBucket& b) {
  if (b.lo == 0) return fmt::format("< {:g}", b.hi);
  if (b.hi >= 1) return fmt::format(">= {:g}", b.lo);
  return fmt::format("{:g} .. {:g}", b.lo, b.hi);
}

nlohmann::json buckets_json(const std::vector<FrequencyBucket>& buckets) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& b : buckets)
    out.push_back({{"frequency_lo", b.lo},
                   {"frequency_hi", b.hi},
                   {"range", frequency_range(b)},
                   {"tokens", b.tokens},
                   {"loss", b.loss()},
                   {"perplexity", std::exp(b.loss())}});
  return out;
}

void print_buckets(const std::vector<FrequencyBucket>& buckets) {
  std::cout << fmt::format("{:<22} {:>10} {:>9} {:>12}\n", "frequency in training", "tokens", "loss", "perplexity");
  for (const auto& b : buckets)
    std::cout << fmt::format("{:<22} {:>10} {:>9.4f} {:>12.3f}\n", frequency_range(b), b.tokens, b.loss(),
                             std::exp(b.loss()));
}

// One evaluation data set: --data NAME=SPEC (a name repeated adds files to it), plain --data specs
// together ("data"), or the run's data.val ("val").
struct EvalData {
  std::string name, key;
  std::vector<std::string> specs;
};

std::vector<EvalData> eval_datasets(const std::vector<std::string>& data, const RunData& run) {
  if (data.empty()) {
    if (!run.has_val()) throw UsageError("eval: the run has no data.val; pass --data SHARDS");
    return {{"val", "data.val", run.val("eval: perplexity without --data needs the validation shards")}};
  }
  static const std::regex named(R"(([A-Za-z_][A-Za-z0-9_.-]*)=(.+))");
  std::vector<EvalData> out;
  for (const auto& arg : data) {
    std::smatch m;
    const bool has_name = std::regex_match(arg, m, named);
    const std::string name = has_name ? m[1].str() : "data", spec = has_name ? m[2].str() : arg;
    auto it = std::find_if(out.begin(), out.end(), [&](const EvalData& d) { return d.name == name; });
    if (it == out.end()) it = out.insert(out.end(), {name, has_name ? "--data " + name : "--data", {}});
    it->specs.push_back(spec);
  }
  return out;
}

nlohmann::json result_json(const std::string& name, const BucketedEval& result, bool buckets) {
  const auto& r = result.total;
  nlohmann::json j = {{"data", name}, {"loss", r.loss}, {"perplexity", r.perplexity}, {"tokens", r.tokens}};
  if (buckets) j["buckets"] = buckets_json(result.buckets);
  return j;
}

void run_eval(const EvalArgs& args) {
  if (args.buckets) check_bucket_edges(args.edges);
  if (!args.task.empty()) task_kind_of(args.task[0]);  // a bad task fails before the model loads
  auto loaded = load_trained_model(args.path);
  const auto& cfg = loaded.config;
  if (!args.task.empty()) {
    const at::Device device = resolve_device(args.device, "--device");
    loaded.model->to(device);
    return run_task(args, loaded, device);
  }
  const RunData run_data(loaded.run_dir, cfg.data);
  const auto datasets = eval_datasets(args.data, run_data);
  LoaderOptions o;
  o.batch = cfg.train.micro_batch;
  o.seq_len = cfg.train.seq_len;
  o.shuffle = false;
  const int64_t batches = args.batches >= 0 ? args.batches : cfg.eval.batches;
  const at::Device device = resolve_device(args.device, "--device");
  loaded.model->to(device);
  const bool bf16 = args.precision.empty() ? cfg.train.precision == Precision::bf16 : args.precision == "bf16";
  std::vector<int64_t> counts;
  if (args.buckets) {
    if (!run_data.has_train()) throw UsageError("eval --buckets: the run has no data.train to count frequencies in");
    counts = training_token_counts(run_data.train("eval --buckets: frequency buckets need the training shards"),
                                   cfg.model.vocab_size);
  }
  std::vector<std::unique_ptr<BatchLoader>> loaders;  // all opened first: a bad one fails before any work
  for (const auto& d : datasets) {
    loaders.push_back(open_loader(d.specs, d.key, o, cfg.model.vocab_size));
    require_same_tokenizer(run_data.tokenizer(), "the run's data", d.specs, d.key);
  }
  if (!args.logits.empty()) write_first_batch_logits(*loaded.model, *loaders.front(), device, args.logits);
  std::vector<BucketedEval> results;
  for (auto& loader : loaders)
    results.push_back(args.buckets
                          ? evaluate_buckets(*loaded.model, *loader, batches, device, bf16, counts, args.edges)
                          : BucketedEval{evaluate_perplexity(*loaded.model, *loader, batches, device, bf16), {}});
  if (args.json) {
    nlohmann::json j = {{"checkpoint", loaded.checkpoint_dir.string()},
                        {"step", loaded.step},
                        {"device", device.str()},
                        {"precision", bf16 ? "bf16" : "fp32"}};
    auto entries = nlohmann::json::array();
    for (size_t i = 0; i < datasets.size(); ++i)
      entries.push_back(result_json(datasets[i].name, results[i], args.buckets));
    if (datasets.size() == 1)
      j.update(entries[0]);  // one data set: its numbers at the top level
    else
      j["datasets"] = entries;
    std::cout << j.dump() << "\n";
    return;
  }
  std::cout << fmt::format("checkpoint {} (step {})\n", loaded.checkpoint_dir.string(), loaded.step);
  if (datasets.size() > 1)
    std::cout << fmt::format("{:<16} {:>12} {:>9} {:>12}\n", "data", "tokens", "loss", "perplexity");
  for (size_t i = 0; i < datasets.size(); ++i) {
    const auto& r = results[i].total;
    if (datasets.size() > 1)
      std::cout << fmt::format("{:<16} {:>12} {:>9.4f} {:>12.3f}\n", datasets[i].name, r.tokens, r.loss, r.perplexity);
    else
      std::cout << fmt::format("loss {:.4f} nats/token, perplexity {:.3f} over {} tokens\n", r.loss, r.perplexity,
                               r.tokens);
    if (args.buckets) {
      if (datasets.size() > 1) std::cout << datasets[i].name << " by frequency:\n";
      print_buckets(results[i].buckets);
    }
  }
}

}  // namespace

void register_eval(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Validation loss and perplexity of a trained model");
  cmd->footer(
      "Examples:\n"
      "  ember eval runs/tiny                      # newest valid checkpoint, the run's data.val\n"
      "  ember eval runs/tiny/checkpoints/step_200 --data data/other/val_*.bin --batches 0 --json\n"
      "  ember eval runs/tiny --buckets --batches 0            # by token frequency, as the Leviathan paper\n"
      "  ember eval runs/tiny --data val='data/pydoc/val_*.bin' --data kjv='data/kjv/val_*.bin'   # a table\n"
      "  ember eval runs/tiny --task choice hellaswag_val.jsonl  # {context, endings, label} per line\n"
      "  ember eval runs/tiny --task lambada lambada_test.jsonl  # {text} per line: last-word accuracy\n"
      "  ember eval runs/recall --task recall data/recall/recall_task.jsonl  # associative recall accuracy");
  auto args = std::make_shared<EvalArgs>();
  cmd->add_option("path", args->path, "Run directory or checkpoint directory")->required();
  cmd->add_option("--data", args->data,
                  "Shard files, directories or globs (default: the run's data.val); NAME=GLOB, repeated, "
                  "evaluates several named data sets in one call");
  cmd->add_option("--batches", args->batches, "Batches to evaluate (0: all; default: eval.batches)")
      ->check(kNonNegative);
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_option("--device", args->device, "auto (CUDA when available), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_flag("--buckets", args->buckets,
                "Loss and perplexity by the target token's frequency in the training data (Leviathan buckets)");
  cmd->add_option("--bucket-edges", args->edges, "Relative frequencies between buckets (default 1e-7,1e-6,1e-5,1e-4)")
      ->delimiter(',');
  cmd->add_option("--task", args->task,
                  "A zero-shot task instead of perplexity: 'choice FILE' (multiple choice JSONL), 'lambada FILE' or "
                  "'recall FILE' (ember prepare recall)")
      ->expected(2);
  cmd->add_option("--logits", args->logits,
                  "Also write the first batch's inputs and fp32 logits to this .safetensors file (for parity checks)");
  cmd->add_option("--limit", args->limit, "Score only the first N items of --task (0: all)")->check(kNonNegative);
  cmd->add_option("--precision", args->precision, "fp32 or bf16 (autocast; default: the run's train.precision)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd->callback([args] { run_eval(*args); });
}

}  // namespace ember::cli
