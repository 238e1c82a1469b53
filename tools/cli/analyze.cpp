#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "ember/analysis/line_plot.h"
#include "ember/analysis/plot_output.h"
#include "ember/data/shard.h"
#include "ember/eval/alignment.h"
#include "ember/eval/model_loader.h"
#include "ember/util/error.h"
#include "ember/util/files.h"

namespace ember::cli {
namespace {

struct AlignmentArgs {
  std::string ckpt;
  std::vector<std::string> data;
  int64_t batches = 8;
  int64_t batch_size = 8;
  bool json = false;
  std::string plot;  // PNG of both curves over depth
};

// Shards as given; a plain text file is byte-tokenised for byte-level (V = 256) models.
std::vector<fs::path> data_shards(const AlignmentArgs& args, const ModelConfig& model, const fs::path& scratch) {
  std::vector<fs::path> shards;
  for (const auto& spec : args.data) {
    if (fs::is_regular_file(spec) && fs::path(spec).extension() != ".bin") {
      if (model.vocab_size != 256)
        throw UsageError("--data '" + spec + "': text input needs the model's tokenizer; this model has vocab_size " +
                         std::to_string(model.vocab_size) + " (only byte-level models read text); pass token shards");
      const std::string text = read_text_file(spec);
      std::vector<uint32_t> tokens(text.begin(), text.end());
      for (auto& t : tokens) t &= 0xFF;
      fs::create_directories(scratch);
      shards.push_back(scratch / ("text_" + std::to_string(shards.size()) + ".bin"));
      write_shard(shards.back(), tokens);
    } else {
      for (auto& p : resolve_shards({spec}, "--data")) shards.push_back(p);
    }
  }
  return shards;
}

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
  write_line_chart_png(png, chart);
}

void run_alignment(const AlignmentArgs& args) {
  if (!args.plot.empty()) check_plot_path(args.plot);
  auto loaded = load_trained_model(args.ckpt);
  const fs::path scratch = fs::temp_directory_path() / ("ember_align_" + std::to_string(::getpid()));
  LoaderOptions o;
  o.batch = args.batch_size;
  o.seq_len = loaded.config.train.seq_len;
  o.shuffle = false;
  auto shards = data_shards(args, loaded.config.model, scratch);
  BatchLoader loader(shards, o);
  if (loader.max_token() >= static_cast<uint32_t>(loaded.config.model.vocab_size))
    throw DataError("--data: token ids exceed the model's vocab_size " + std::to_string(loaded.config.model.vocab_size));
  auto result = residual_alignment(*loaded.model, loader, args.batches);
  fs::remove_all(scratch);
  if (!args.plot.empty()) plot_alignment(args.plot, result, loaded.checkpoint_dir.string());
  if (args.json) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : result.layers)
      layers.push_back({{"layer", l.layer}, {"mixer_cos", l.mixer_cos}, {"mlp_cos", l.mlp_cos}});
    std::cout << nlohmann::json{{"checkpoint", loaded.checkpoint_dir.string()}, {"tokens", result.tokens},
                                {"layers", layers}}.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("residual alignment of {} over {} tokens\n", loaded.checkpoint_dir.string(), result.tokens);
  std::cout << fmt::format("{:>5} {:>22} {:>22}\n", "layer", "cos(mixer out, x_l)", "rho_l = cos(MLP out, h_l)");
  for (const auto& l : result.layers)
    std::cout << fmt::format("{:>5} {:>22.4f} {:>22.4f}\n", l.layer, l.mixer_cos, l.mlp_cos);
}

}  // namespace

void register_analyze(CLI::App& app) {
  auto* cmd = app.add_subcommand("analyze", "Analyses of trained checkpoints");
  cmd->require_subcommand(1);
  auto* align = cmd->add_subcommand("alignment",
      "Per layer, mean cosine between each MLP's (and mixer's) output and the residual stream it is added to");
  align->footer(
      "rho_l near 1 means layer l's MLP reinforces what the stream already holds (Tapered LMs).\n"
      "Examples:\n"
      "  ember analyze alignment --ckpt runs/tiny --data data/pydoc/val_00000.bin\n"
      "  ember analyze alignment --ckpt runs/tiny/checkpoints/step_300 --data notes.txt --json\n"
      "  ember analyze alignment --ckpt runs/tiny --data data/pydoc/val_00000.bin --plot alignment.png");
  auto args = std::make_shared<AlignmentArgs>();
  align->add_option("--ckpt", args->ckpt, "Run directory or checkpoint directory")->required();
  align->add_option("--data", args->data, "Token shards / directories / globs, or a text file (byte-level models)")
      ->required();
  align->add_option("--batches", args->batches, "Batches to average over")->check(CLI::PositiveNumber);
  align->add_option("--batch-size", args->batch_size, "Sequences per batch")->check(CLI::PositiveNumber);
  align->add_flag("--json", args->json, "Print JSON");
  align->add_option("--plot", args->plot, "Also write both curves over depth as a PNG");
  align->callback([args] { run_alignment(*args); });
}

}  // namespace ember::cli
