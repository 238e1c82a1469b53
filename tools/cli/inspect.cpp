#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include <iostream>

#include "cli/commands.h"
#include "ember/run/run_config.h"
#include "ember/model/summary.h"
#include "ember/train/memory_estimate.h"
#include "ember/util/error.h"

namespace ember::cli {
namespace {

struct InspectArgs {
  std::vector<std::string> configs;  // one model each
  ConfigArgs common;                 // -c base files merged under each, --set applied to each
  bool json = false;
  bool memory = false;  // --memory: per-process training memory; 0 / "" below: the config's value
  int64_t micro_batch = 0, seq_len = 0, zero = 0, world = 1;
  std::string precision, checkpointing;
  double device_gb = 80.0;
};

// The memory options of a config, with the command line's overrides.
MemoryOptions memory_options(const Config& cfg, const InspectArgs& a) {
  MemoryOptions o;
  o.micro_batch = a.micro_batch > 0 ? a.micro_batch : cfg.train.micro_batch;
  o.seq_len = a.seq_len > 0 ? a.seq_len : cfg.train.seq_len;
  o.precision = cfg.train.precision;
  if (!a.precision.empty()) enum_from_name(a.precision, o.precision);
  o.checkpointing = cfg.train.activation_checkpointing;
  if (!a.checkpointing.empty()) enum_from_name(a.checkpointing, o.checkpointing);
  o.checkpointing_k = cfg.train.activation_checkpointing_k;
  o.zero = a.zero;
  o.world = a.world;
  o.grad_comm_bf16 = cfg.distributed.grad_comm == GradComm::bf16;
  o.gpu = cfg.train.device == DeviceChoice::cuda || (cfg.train.device == DeviceChoice::automatic && torch::cuda::is_available());
  return o;
}

nlohmann::json memory_json(const Config& cfg, const InspectArgs& a) {
  const MemoryOptions o = memory_options(cfg, a);
  const auto was = kernels::install(cfg.kernels.choices);  // the config's paths; auto counts as fused
  nlohmann::json j = estimate_training_memory(cfg.model, o).to_json();
  kernels::install(was);
  j["micro_batch"] = o.micro_batch, j["seq_len"] = o.seq_len, j["precision"] = enum_name(o.precision);
  j["activation_checkpointing"] = enum_name(o.checkpointing), j["zero"] = o.zero, j["world"] = o.world;
  j["device_gb"] = a.device_gb;
  j["fits"] = j["total"].get<double>() <= a.device_gb * 1e9;
  return j;
}

void print_memory(const nlohmann::json& m) {
  std::cout << fmt::format(
      "training memory per process: micro-batch {} x {} tokens, {}, checkpointing {}, ZeRO-{} over "
      "{} rank(s)\n",
      m["micro_batch"].get<int64_t>(), m["seq_len"].get<int64_t>(), m["precision"].get<std::string>(),
      m["activation_checkpointing"].get<std::string>(), m["zero"].get<int64_t>(), m["world"].get<int64_t>());
  for (const char* k :
       {"parameters", "gradients", "optimizer", "autocast_copies", "gradient_buckets", "activations", "loss", "total"})
    std::cout << fmt::format("  {:<16} {:>9.2f} GB\n", k, m[k].get<double>() / 1e9);
  std::cout << fmt::format("  {} a device of {:g} GB (allocator slack, CUDA context and buffers not counted; "
                           "kernels.* auto counted as fused, which a run's check may turn to aten)\n",
                           m["fits"].get<bool>() ? "fits" : "does NOT fit", m["device_gb"].get<double>());
}

// Parameters and FLOPs of one config, counted on a shape-only instance of the real model.
nlohmann::json describe(const std::string& file, const InspectArgs& args) {
  std::vector<std::string> files = args.common.files;
  files.push_back(file);
  Config cfg = load_config(files, args.common.overrides);
  nlohmann::json out = summarize_model(cfg.model, cfg.train.seq_len).to_json();
  out["config"] = file;
  if (args.memory) out["memory"] = memory_json(cfg, args);
  return out;
}

void print_lev_match(const nlohmann::json& m) {
  if (!m.contains("lev_budget_params")) return;
  std::cout << fmt::format("  vs P_LEV {:>11} ({:+.2f}%)", m["lev_budget_params"].get<int64_t>(),
                           100 * m["embedding_vs_lev"].get<double>());
  if (m["embedding_step"].get<int64_t>() > 1)  // e.g. albert: one more m adds V + D
    std::cout << fmt::format("; {} moves in steps of {}", m["embedding_kind"].get<std::string>(),
                             m["embedding_step"].get<int64_t>());
  std::cout << "\n";
}

std::string human(double x) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (std::abs(x) >= 1000 && u < 4) x /= 1000, ++u;
  return fmt::format("{:.4g}{}", x, units[u]);
}

void print_one(const nlohmann::json& m) {
  std::cout << fmt::format("{} (embedding {}, mixer {}, taper {})\n", m["config"].get<std::string>(),
                           m["embedding_kind"].get<std::string>(), m["mixer"].get<std::string>(),
                           m["taper"].get<std::string>());
  std::cout << fmt::format("{:>5} {:>16} {:>7} {:>13} {:>13} {:>13} {:>15}\n", "layer", "mixer", "d_ff", "mixer params",
                           "mlp params", "params", "fwd FLOPs/tok");
  for (const auto& l : m["layers"])
    std::cout << fmt::format("{:>5} {:>16} {:>7} {:>13} {:>13} {:>13} {:>15}\n", l["layer"].get<int>(),
                             l["mixer"].get<std::string>(), l["d_ff"].get<int64_t>(), l["mixer_params"].get<int64_t>(),
                             l["mlp_params"].get<int64_t>(), l["params"].get<int64_t>(),
                             human(l["fwd_flops_per_token"].get<double>()));
  for (const char* k : {"embedding_params", "body_params", "head_params", "total_params"}) {
    std::cout << fmt::format("{:<17} {:>14} ({})\n", k, m[k].get<int64_t>(), human(m[k].get<double>()));
    if (k == std::string("embedding_params")) print_lev_match(m);
  }
  std::cout << fmt::format("training FLOPs/token at T={}: {} (attention scores in full, as MFU counts them; "
                           "causal-halved: {})\n",
                           m["seq_len"].get<int64_t>(), human(m["train_flops_per_token"].get<double>()),
                           human(m["causal_train_flops_per_token"].get<double>()));
  if (m.contains("memory")) print_memory(m["memory"]);
}

void print_diff(const nlohmann::json& a, const nlohmann::json& b) {
  std::cout << fmt::format("A = {}\nB = {}\n", a["config"].get<std::string>(), b["config"].get<std::string>());
  std::cout << fmt::format("{:>5} {:>7} {:>7} {:>13} {:>13} {:>13}\n", "layer", "d_ff A", "d_ff B", "params A",
                           "params B", "B - A");
  const size_t n = std::max(a["layers"].size(), b["layers"].size());
  for (size_t l = 0; l < n; ++l) {
    auto get = [&](const nlohmann::json& m, const char* k) -> int64_t {
      return l < m["layers"].size() ? m["layers"][l][k].get<int64_t>() : 0;
    };
    std::cout << fmt::format("{:>5} {:>7} {:>7} {:>13} {:>13} {:>+13}\n", l, get(a, "d_ff"), get(b, "d_ff"),
                             get(a, "params"), get(b, "params"), get(b, "params") - get(a, "params"));
  }
  for (const char* k : {"embedding_params", "body_params", "head_params", "total_params", "train_flops_per_token"})
    std::cout << fmt::format("{:<22} {:>16} {:>16} {:>+16}\n", k, human(a[k].get<double>()), human(b[k].get<double>()),
                             b[k].get<double>() - a[k].get<double>());
  for (const auto* m : {&a, &b})
    if (m->contains("lev_budget_params")) {
      std::cout << (m == &a ? "A" : "B") << " embedding";
      print_lev_match(*m);
    }
  for (const auto* m : {&a, &b})
    if (m->contains("memory")) {
      std::cout << (m == &a ? "A " : "B ");
      print_memory((*m)["memory"]);
    }
}

// Three or more models: one column each, models named M1, M2, ... above the table.
void print_columns(const std::vector<nlohmann::json>& models) {
  for (size_t i = 0; i < models.size(); ++i)
    std::cout << fmt::format("M{} = {}\n", i + 1, models[i]["config"].get<std::string>());
  size_t layers = 0;
  std::string header = fmt::format("{:<22}", "d_ff by layer");
  for (size_t i = 0; i < models.size(); ++i) {
    layers = std::max(layers, models[i]["layers"].size());
    header += fmt::format(" {:>10}", fmt::format("M{}", i + 1));
  }
  std::cout << header << "\n";
  for (size_t l = 0; l < layers; ++l) {
    std::string row = fmt::format("{:<22}", l);
    for (const auto& m : models)
      row += fmt::format(" {:>10}", l < m["layers"].size() ? std::to_string(m["layers"][l]["d_ff"].get<int64_t>()) : "-");
    std::cout << row << "\n";
  }
  for (const char* k : {"embedding_params", "body_params", "head_params", "total_params", "train_flops_per_token"}) {
    std::string row = fmt::format("{:<22}", k);
    for (const auto& m : models) row += fmt::format(" {:>10}", human(m[k].get<double>()));
    std::cout << row << "\n";
  }
}

void run_inspect(const InspectArgs& args) {
  std::vector<nlohmann::json> models;
  for (const auto& f : args.configs) models.push_back(describe(f, args));
  if (args.json) {
    std::cout << (models.size() == 1 ? models[0] : nlohmann::json(models)).dump(2) << "\n";
    return;
  }
  if (models.size() == 1)
    print_one(models[0]);
  else if (models.size() == 2)
    print_diff(models[0], models[1]);
  else
    print_columns(models);
}

}  // namespace

void register_inspect(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("inspect", "Per-layer widths, parameters and FLOPs of a config (or several, side by side)");
  cmd->footer(
      "Examples:\n"
      "  ember inspect configs/tiny.yaml\n"
      "  ember inspect configs/tapered/cpu.yaml --set model.mlp.taper.schedule=cosine --json\n"
      "  ember inspect -c configs/tapered/440m.yaml configs/tapered/uniform.yaml configs/tapered/cosine.yaml\n"
      "  ember inspect -c configs/tapered/440m.yaml configs/tapered/{uniform,linear,cosine,sigmoid}.yaml --json\n"
      "  ember inspect configs/tapered/1.3b.yaml --memory --precision bf16 --zero 1 --world 8\n\n" +
      kinds_help());
  auto args = std::make_shared<InspectArgs>();
  cmd->add_option("configs", args->configs, "Config file of a model; two or more compare the models (two: with B - A)")->required();
  cmd->add_option("-c,--config", args->common.files, "Base config merged under each model's file")
      ->allow_extra_args(false);
  cmd->add_option("--set", args->common.overrides, "Override a key in every model, e.g. --set model.n_layers=12")
      ->allow_extra_args(false);
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_flag("--memory", args->memory, "Estimate the memory one training process holds (see the options below)");
  cmd->add_option("--micro-batch", args->micro_batch, "Sequences per micro-batch (default: train.micro_batch)")
      ->check(kPositive);
  cmd->add_option("--seq-len", args->seq_len, "Tokens per sequence (default: train.seq_len)")->check(kPositive);
  cmd->add_option("--precision", args->precision, "fp32 or bf16 (default: train.precision)")
      ->check(CLI::IsMember(enum_spellings<Precision>()));
  cmd->add_option("--checkpointing", args->checkpointing,
                  "none, full or every_k (default: train.activation_checkpointing)")
      ->check(CLI::IsMember(enum_spellings<ActivationCheckpointing>()));
  cmd->add_option("--zero", args->zero, "0 (replicated optimizer state) or 1 (ZeRO-1: sharded over --world)")
      ->check(CLI::Range(0, 1));
  cmd->add_option("--world", args->world, "Data-parallel ranks")->check(kPositive);
  cmd->add_option("--device-gb", args->device_gb, "Device memory to compare with (default 80)")->check(kPositive);
  cmd->callback([args] { run_inspect(*args); });
}

}  // namespace ember::cli
