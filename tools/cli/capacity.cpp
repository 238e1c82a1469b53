// `ember capacity`: epsilon and representational capacity of embedding matrices
// (docs/capacity.md), and `ember capacity bound` for a given d_model and epsilon.

#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "ember/analysis/capacity_report.h"
#include "ember/analysis/cosine_histogram_plot.h"
#include "ember/analysis/plot_output.h"
#include "ember/util/error.h"
#include "ember/util/log.h"

namespace ember::cli {
namespace {

struct CapacityArgs {
  std::vector<std::string> inputs;
  std::string tensor, plot, device = "auto", constants;
  bool json = false, moments = false;
  int64_t sample = 0, block = 4096;
  uint64_t seed = 0;
};

struct BoundArgs {
  std::vector<double> d, eps;
  std::string constants;
  bool json = false;
};

FullFormConstants parse_constants(const std::string& text) {
  if (text.empty()) return {};
  std::vector<double> v;
  std::stringstream ss(text);
  std::string cell;
  try {
    while (std::getline(ss, cell, ',')) v.push_back(std::stod(cell));
  } catch (const std::exception&) {
    v.clear();
  }
  if (v.size() != 4 || !(v[0] > 0 && v[1] > 0 && v[2] > 0))
    throw UsageError(
        "--constants: expected C,a,b,c of the full form (as `ember capacity fit` prints), e.g. "
        "0.45809143,1.0668005,1.44738666,0.97197234; got '" +
        text + "'");
  return {v[0], v[1], v[2], v[3]};
}

CapacityOptions capacity_options(const CapacityArgs& a) {
  if (a.sample > 0 && a.moments) throw UsageError("--sample and --moments exclude each other");
  if (a.sample < 0) throw UsageError("--sample: expected a positive number of pairs");
  CapacityOptions o;
  o.tensor = a.tensor;
  o.device = resolve_device(a.device, "--device");
  o.constants = parse_constants(a.constants);
  o.epsilon.method = a.sample > 0 ? EpsilonMethod::sampled
                     : a.moments  ? EpsilonMethod::moments
                                  : EpsilonMethod::exact;
  o.epsilon.sample_pairs = a.sample;
  o.epsilon.seed = a.seed;
  o.epsilon.block = a.block;
  o.epsilon.progress_label = "capacity";
  return o;
}

void run_capacity(const CapacityArgs& a) {
  if (a.inputs.empty())
    throw UsageError(
        "capacity: give one or more inputs (run or checkpoint directories, .safetensors, "
        "model.safetensors.index.json, .npy), or a subcommand: bound, simulate, fit");
  if (!a.plot.empty() && a.moments) throw UsageError("--plot needs the pairwise histogram: drop --moments");
  if (!a.plot.empty()) check_plot_path(a.plot);  // before the (long) exact pass
  const CapacityOptions o = capacity_options(a);
  std::vector<CapacityReport> reports;
  for (const auto& input : a.inputs) reports.push_back(capacity_report(input, o));
  if (!a.plot.empty()) {
    std::vector<HistogramSeries> series;
    for (const auto& r : reports)
      series.push_back({r.input, r.estimate.histogram, r.estimate.mu, r.estimate.epsilon(),
                        r.estimate.method == EpsilonMethod::sampled});
    write_cosine_histogram(a.plot, series);
    log::info("capacity: wrote the cosine histogram to {}", a.plot);
  }
  if (a.json) return print_json_array(reports, report_json);
  std::cout << comparison_table(reports);
}

void run_bound(const BoundArgs& a) {
  const auto constants = parse_constants(a.constants);
  std::vector<CapacityBounds> rows;
  for (double eps : a.eps)  // a matrix's degenerate epsilon is reported; a typed one is a mistake
    if (!(eps > 0.0 && eps <= 1.0)) throw UsageError(fmt::format("--eps: epsilon must be in (0, 1], got {}", eps));
  for (double d : a.d)
    for (double eps : a.eps) rows.push_back(capacity_bounds(d, eps, constants));
  if (a.json) return print_json_array(rows, bounds_json);
  std::cout << bounds_table(rows);
}

void add_bound(CLI::App& capacity) {
  auto* cmd = capacity.add_subcommand("bound", "The capacity bounds and class for a d_model and epsilon, no matrix");
  cmd->footer(
      "Examples:\n"
      "  ember capacity bound --d 4096 --eps 0.0645          # Llama 2 7B: 3.99e+07 by the full form\n"
      "  ember capacity bound --d 2048,3072 --eps 0.09 --json\n"
      "  ember capacity bound --d 4096 --eps 0.06 --constants 0.46,1.07,1.45,0.97   # your own fit");
  auto args = std::make_shared<BoundArgs>();
  cmd->add_option("--d", args->d, "d_model (comma-separated for several)")->required()->delimiter(',');
  cmd->add_option("--eps", args->eps, "epsilon = mu + 2 sigma (comma-separated for several)")
      ->required()
      ->delimiter(',');
  cmd->add_option("--constants", args->constants, "C,a,b,c of the full form (default: the paper's fit)");
  cmd->add_flag("--json", args->json, "Print a JSON array");
  cmd->callback([args] { run_bound(*args); });
}

}  // namespace

void register_capacity(CLI::App& app) {
  auto* cmd = app.add_subcommand("capacity", "Epsilon and representational capacity of embedding matrices");
  cmd->footer(
      "Inputs: ember run or checkpoint directories (the input embedding, materialised for every kind),\n"
      "Hugging Face .safetensors files, sharded checkpoints (model.safetensors.index.json or their\n"
      "directory), and .npy matrices; fp32, fp16 or bf16. Several inputs give one comparison table.\n"
      "Examples:\n"
      "  ember capacity runs/tied runs/untied runs/lev          # side by side\n"
      "  ember capacity ~/models/llama-3-8b --json              # finds model.embed_tokens.weight\n"
      "  ember capacity gpt2/model.safetensors --plot gpt2.png  # histogram with mu and epsilon\n"
      "  ember capacity big/model.safetensors.index.json --sample 2000000   # fast estimate with a CI\n"
      "  ember capacity bound --d 4096 --eps 0.0645\n"
      "  ember capacity simulate --k 200,400 --d 16,32 --draws 20 --steps 300 --out sweep.csv\n"
      "  ember capacity fit sweep.csv");
  auto args = std::make_shared<CapacityArgs>();
  cmd->add_option("inputs", args->inputs, "Run/checkpoint directories, .safetensors, index .json, .npy");
  cmd->add_option("--tensor", args->tensor, "Tensor name (default: the usual input-embedding names)");
  cmd->add_flag("--json", args->json, "Print a JSON array, one object per input");
  cmd->add_option("--sample", args->sample, "Estimate from N random pairs with a 95% CI (labelled sampled)");
  cmd->add_option("--seed", args->seed, "Seed of --sample");
  cmd->add_flag("--moments", args->moments,
                "Exact mu and sigma from the d x d Gram identity, O(V d^2): no histogram, no --plot");
  cmd->add_option("--plot", args->plot, "Write a PNG histogram of the pairwise cosines, mu and epsilon marked");
  cmd->add_option("--block", args->block, "Rows per Gram block of the exact pass (memory: block^2 x 4 bytes)")
      ->check(kPositive);
  cmd->add_option("--device", args->device, "auto, cpu or cuda");
  cmd->add_option("--constants", args->constants, "C,a,b,c of the full form (default: the paper's fit)");
  add_bound(*cmd);
  add_capacity_simulate(*cmd);
  add_capacity_fit(*cmd);
  cmd->callback([cmd, args] {
    if (!cmd->get_subcommands().empty()) return;  // bound / simulate / fit ran
    run_capacity(*args);
  });
}

}  // namespace ember::cli
