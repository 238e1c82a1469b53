// ember export hf / ember import hf: the Hugging Face ecosystem's Llama format (docs/interop.md).
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "ember/interop/hf_export.h"
#include "ember/interop/hf_files.h"
#include "ember/interop/hf_import.h"
#include "ember/util/error.h"

namespace ember::cli {
namespace {

struct ExportArgs {
  std::string source, out, dtype = "fp32", max_shard_size = "5GB";
};

void run_export(const ExportArgs& args) {
  HfExportOptions o;
  o.out = args.out;
  o.dtype = args.dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  o.max_shard_bytes = parse_byte_size(args.max_shard_size, "--max-shard-size");
  const auto r = export_hf(args.source, o);
  std::cout << fmt::format("exported {} (step {}) as {} to {} ({} weight file{})\n{}\n", r.checkpoint.string(), r.step,
                           r.class_name, args.out, r.weight_files, r.weight_files == 1 ? "" : "s", r.tokenizer);
}

struct ImportArgs {
  std::string source, out;
};

void run_import(const ImportArgs& args) {
  const auto r = import_hf(args.source, args.out);
  std::cout << fmt::format("imported {} into {} ({} parameters, embedding {}, mixer {})\n", args.source,
                           r.checkpoint.string(), r.parameters, r.embedding_kind, r.mixer_kind);
}

}  // namespace

void register_export(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Write a trained model in another ecosystem's format");
  cmd->require_subcommand(1);
  auto* hf = cmd->add_subcommand("hf", "A directory transformers loads with AutoModelForCausalLM.from_pretrained");
  hf->footer(
      "Examples:\n"
      "  ember export hf runs/tiny --out exports/tiny\n"
      "  ember export hf runs/lev/checkpoints/step_2000 --out exports/lev --dtype bf16\n"
      "Attention models with one MLP width are LlamaForCausalLM; tapered widths and gated attention add\n"
      "modeling_ember.py (load with trust_remote_code=True); other mixers are refused. Every embedding\n"
      "kind exports its materialised input table. The run's tokenizer is written when its data names one.");
  auto args = std::make_shared<ExportArgs>();
  hf->add_option("source", args->source, "Run directory (its newest checkpoint) or checkpoint directory")->required();
  hf->add_option("--out", args->out, "Directory to create (must not exist, or be empty)")->required();
  hf->add_option("--dtype", args->dtype, "Weights as fp32 or bf16")->check(CLI::IsMember({"fp32", "bf16"}));
  hf->add_option("--max-shard-size", args->max_shard_size, "Shard the weights above this size (e.g. 5GB, 200MB)");
  hf->callback([args] { run_export(*args); });
}

void register_import(CLI::App& app) {
  auto* cmd = app.add_subcommand("import", "Bring a model from another ecosystem into an ember run directory");
  cmd->require_subcommand(1);
  auto* hf = cmd->add_subcommand("hf", "A Llama checkpoint directory (config.json + safetensors)");
  hf->footer(
      "Examples:\n"
      "  ember import hf ~/models/TinyLlama_v1.1 --out runs/tinyllama\n"
      "  ember eval runs/tinyllama --data data/val_*.bin\n"
      "  ember train -c runs/tinyllama/config.yaml -c data.yaml --run-dir runs/tinyllama --resume\n"
      "The run holds config.yaml and checkpoints/step_0 (fp32). `--resume` continues from those weights\n"
      "with a new optimizer state. Architectures and options ember lacks are refused by name.");
  auto args = std::make_shared<ImportArgs>();
  hf->add_option("source", args->source, "Directory with config.json and model.safetensors (or a sharded index)")
      ->required();
  hf->add_option("--out", args->out, "Run directory to create (must not exist, or be empty)")->required();
  hf->callback([args] { run_import(*args); });
}

}  // namespace ember::cli
