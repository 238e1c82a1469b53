#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "ember/analysis/line_plot.h"
#include "ember/analysis/plot_output.h"
#include "ember/run/model_loader.h"
#include "ember/run/run_data.h"
#include "ember/data/text_encoder.h"
#include "ember/eval/alignment.h"
#include "ember/eval/attention_diagnostics.h"
#include "ember/eval/memory_diagnostics.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember::cli {
namespace {

struct AnalyzeArgs {
  std::string ckpt;
  std::vector<std::string> data;
  int64_t batches = 8;
  int64_t batch_size = 8;
  bool json = false;
  std::string plot;  // PNG of both curves over depth
  std::string device = "auto";
  int64_t seq_len = 0;  // 0: the run's train.seq_len
};

// rho_l and the mixer's cosine over depth, as one chart.
void plot_alignment(const std::string& png, const AlignmentResult& result, const std::string& ckpt) {
  LineChart chart{"Residual alignment of " + ckpt, "layer", "mean cosine with the residual stream", -0.05, 1.05, {}};
  LineSeries mlp{"rho_l = cos(MLP out, h_l)", {}, {}}, mixer{"cos(mixer out, x_l)", {}, {}};
  for (const auto& l : result.layers) {
    mlp.x.push_back(static_cast<double>(l.layer)), mlp.y.push_back(l.mlp_cos);
    mixer.x.push_back(static_cast<double>(l.layer)), mixer.y.push_back(l.mixer_cos);
    chart.y_min = std::min({chart.y_min, l.mlp_cos - 0.05, l.mixer_cos - 0.05});
  }
  chart.series = {mlp, mixer};
  write_line_chart(png, chart);
}

// The checkpoint's model and an in-order loader over --data (checked against its vocabulary); the
// scratch directory holds byte-tokenised text inputs and is removed by the destructor.
struct Evaluation {
  LoadedModel loaded;
  fs::path scratch;
  std::unique_ptr<BatchLoader> loader;
  ~Evaluation() { fs::remove_all(scratch); }
};

std::unique_ptr<Evaluation> open_evaluation(const AnalyzeArgs& args) {
  auto e = std::make_unique<Evaluation>();
  e->loaded = load_trained_model(args.ckpt);
  e->loaded.model->to(resolve_device(args.device, "--device"));
  e->scratch = fs::temp_directory_path() / ("ember_analyze_" + std::to_string(::getpid()));
  auto encoder = [&loaded = e->loaded] { return RunData(loaded.run_dir, loaded.config.data).encoder(); };
  LoaderOptions o;
  o.batch = args.batch_size;
  o.seq_len = args.seq_len > 0 ? args.seq_len : e->loaded.config.train.seq_len;
  o.shuffle = false;
  const auto shards = encode_text_inputs(args.data, encoder, e->scratch);
  try {
    e->loader = open_loader(shards, "--data", o, e->loaded.config.model.vocab_size);
  } catch (const DataError& err) {  // name the text files, not the scratch shards they were encoded to
    std::string what = err.what();
    for (size_t i = 0; i < shards.size(); ++i)
      if (shards[i] != args.data[i])
        for (auto at = what.find(shards[i]); at != std::string::npos; at = what.find(shards[i]))
          what.replace(at, shards[i].size(), args.data[i]);
    throw DataError(what);
  }
  return e;
}

void run_alignment(const AnalyzeArgs& args) {
  if (!args.plot.empty()) check_plot_path(args.plot);
  auto e = open_evaluation(args);
  auto& loaded = e->loaded;
  auto result = residual_alignment(*loaded.model, *e->loader, args.batches);
  if (!args.plot.empty()) plot_alignment(args.plot, result, loaded.checkpoint_dir.string());
  if (args.json) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : result.layers)
      layers.push_back({{"layer", l.layer}, {"mixer_cos", l.mixer_cos}, {"mlp_cos", l.mlp_cos}});
    std::cout << nlohmann::json{{"checkpoint", loaded.checkpoint_dir.string()},
                                {"tokens", result.tokens},
                                {"layers", layers}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << fmt::format("residual alignment of {} over {} tokens\n", loaded.checkpoint_dir.string(), result.tokens);
  std::cout << fmt::format("{:>5} {:>22} {:>22}\n", "layer", "cos(mixer out, x_l)", "rho_l = cos(MLP out, h_l)");
  for (const auto& l : result.layers)
    std::cout << fmt::format("{:>5} {:>22.4f} {:>22.4f}\n", l.layer, l.mixer_cos, l.mlp_cos);
}

void run_attention(const AnalyzeArgs& args) {
  auto e = open_evaluation(args);
  auto result = attention_diagnostics(*e->loaded.model, *e->loader, args.batches);
  const std::string ckpt = e->loaded.checkpoint_dir.string();
  if (args.json) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : result.layers) {
      nlohmann::json row = {{"layer", l.layer}, {"first_token_mass", l.first_token_mass}};
      row["mean_gate"] = l.gated ? nlohmann::json(l.mean_gate) : nlohmann::json(nullptr);
      layers.push_back(row);
    }
    std::cout << nlohmann::json{{"checkpoint", ckpt}, {"tokens", result.tokens}, {"layers", layers}}.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("attention of {} over {} tokens\n", ckpt, result.tokens);
  std::cout << fmt::format("{:>5} {:>18} {:>12}\n", "layer", "first-token mass", "mean gate");
  for (const auto& l : result.layers)
    std::cout << fmt::format("{:>5} {:>18.4f} {:>12}\n", l.layer, l.first_token_mass,
                             l.gated ? fmt::format("{:.4f}", l.mean_gate) : "-");
}

nlohmann::json memory_json(const MemoryDiagnostics& d, const std::string& ckpt) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : d.layers) {
    nlohmann::json chunks = nlohmann::json::array();
    for (const auto& c : l.chunks)
      chunks.push_back({{"end", c.end}, {"w1_ratio", c.w1_ratio}, {"w2_ratio", c.w2_ratio},
                        {"contribution", c.contribution}, {"theta", c.theta}, {"eta", c.eta}, {"alpha", c.alpha}});
    layers.push_back({{"layer", l.layer}, {"alpha_bias", l.alpha_bias}, {"chunks", chunks}});
  }
  return {{"checkpoint", ckpt}, {"sequences", d.sequences}, {"seq_len", d.seq_len}, {"layers", layers}};
}

// The chunks ending at 1, 2, 4, ... chunks and the last: the shape of the curve in a few rows.
bool shown(size_t i, size_t n) { return i + 1 == n || ((i + 1) & i) == 0; }

void run_memory(const AnalyzeArgs& args) {
  auto e = open_evaluation(args);
  const auto result = memory_diagnostics(*e->loaded.model, *e->loader, args.batches);
  const std::string ckpt = e->loaded.checkpoint_dir.string();
  if (args.json) {
    std::cout << memory_json(result, ckpt).dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("Titans memory of {} over {} sequences of {} tokens\n", ckpt, result.sequences,
                           result.seq_len);
  for (const auto& l : result.layers) {
    std::cout << fmt::format("layer {}: forget-gate bias per head {:.3f}\n", l.layer, fmt::join(l.alpha_bias, " "));
    std::cout << fmt::format("{:>8} {:>10} {:>10} {:>13} {:>8} {:>8} {:>8}\n", "tokens", "|W1|/|W1_0|",
                             "|W2|/|W2_0|", "contribution", "theta", "eta", "alpha");
    for (size_t i = 0; i < l.chunks.size(); ++i) {
      const auto& c = l.chunks[i];
      if (shown(i, l.chunks.size()))
        std::cout << fmt::format("{:>8} {:>10.4f} {:>10.4f} {:>13.4f} {:>8.4f} {:>8.4f} {:>8.4f}\n", c.end, c.w1_ratio,
                                 c.w2_ratio, c.contribution, c.theta, c.eta, c.alpha);
    }
  }
}

// --ckpt, --data, --batches, --batch-size, --json: what every analysis of a checkpoint takes.
void add_common_options(CLI::App* cmd, AnalyzeArgs& args) {
  cmd->add_option("--ckpt", args.ckpt, "Run directory or checkpoint directory")->required();
  cmd->add_option("--data", args.data,
                  "Token shards / directories / globs, or text files (read with the run's tokenizer)")
      ->required();
  cmd->add_option("--batches", args.batches, "Batches to average over")->check(kPositive);
  cmd->add_option("--batch-size", args.batch_size, "Sequences per batch")->check(kPositive);
  cmd->add_flag("--json", args.json, "Print JSON");
  cmd->add_option("--device", args.device, "auto (CUDA when available), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
}

struct Analysis {
  CLI::App* cmd;
  std::shared_ptr<AnalyzeArgs> args;
};

// One analysis subcommand with the common options; `run` gets its parsed arguments.
Analysis add_analysis(CLI::App* parent, const std::string& name, const std::string& description,
                      const std::string& footer, void (*run)(const AnalyzeArgs&)) {
  auto* cmd = parent->add_subcommand(name, description);
  cmd->footer(footer);
  auto args = std::make_shared<AnalyzeArgs>();
  add_common_options(cmd, *args);
  cmd->callback([args, run] { run(*args); });
  return {cmd, args};
}

}  // namespace

void register_analyze(CLI::App& app) {
  auto* cmd = app.add_subcommand("analyze", "Analyses of trained checkpoints");
  cmd->require_subcommand(1);
  const auto align = add_analysis(
      cmd, "alignment",
      "Per layer, mean cosine between each MLP's (and mixer's) output and the residual stream it is added to",
      "rho_l near 1 means layer l's MLP reinforces what the stream already holds (Tapered LMs).\n"
      "Examples:\n"
      "  ember analyze alignment --ckpt runs/tiny --data data/pydoc/val_00000.bin\n"
      "  ember analyze alignment --ckpt runs/tiny/checkpoints/step_300 --data notes.txt --json\n"
      "  ember analyze alignment --ckpt runs/tiny --data data/pydoc/val_00000.bin --plot alignment.png",
      run_alignment);
  align.cmd->add_option("--plot", align.args->plot, "Also write both curves over depth as a PNG");
  add_analysis(
      cmd, "attention",
      "Per layer, the attention sink (mean attention on the first token) and the mean gate of gated attention",
      "Gated attention should drive both down during training (docs/mixers.md).\n"
      "Examples:\n"
      "  ember analyze attention --ckpt runs/gated --data data/pydoc/val_00000.bin\n"
      "  ember analyze attention --ckpt runs/tiny --data data/pydoc/val_00000.bin --batches 32 --json",
      run_attention);
  const auto memory = add_analysis(
      cmd, "memory",
      "Titans: per layer, the memory's size and contribution along the sequence, the gates and forget bias",
      "contribution = ||M_t(q) - q|| / ||q||: 0 when the memory has decayed to W = 0 (docs/mixers.md).\n"
      "Examples:\n"
      "  ember analyze memory --ckpt runs/titans --data data/pydoc/val_00000.bin\n"
      "  ember analyze memory --ckpt runs/titans --data notes.txt --seq-len 4096 --batches 2 --json",
      run_memory);
  memory.cmd->add_option("--seq-len", memory.args->seq_len, "Sequence length (default: the run's train.seq_len)")->check(kPositive);
}

}  // namespace ember::cli
