#include <nlohmann/json.hpp>

#include <iostream>

#include "cli/commands.h"
#include "ember/config/config.h"
#include "ember/model/lm.h"

namespace ember::cli {
namespace {

int64_t count(const std::vector<at::Tensor>& params) {
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  return n;
}

void run_inspect(const ConfigArgs& args, bool json) {
  Config cfg = load_config(args.files, args.overrides);
  LanguageModel model(cfg.model);
  const int64_t T = cfg.train.seq_len;
  nlohmann::json layers = nlohmann::json::array();
  int64_t body = 0;
  for (size_t l = 0; l < model.blocks().size(); ++l) {
    auto& b = *model.blocks()[l];
    const int64_t mixer = count(b.mixer().parameters()), mlp = count(b.mlp().parameters());
    const int64_t all = count(b.parameters());
    body += all;
    layers.push_back({{"layer", l}, {"mixer", cfg.model.mixer.kind}, {"d_ff", b.mlp().d_ff()},
                      {"mixer_params", mixer}, {"mlp_params", mlp}, {"params", all}});
  }
  const int64_t embedding = model.num_embedding_parameters();
  const int64_t total = model.num_parameters();
  nlohmann::json out = {{"embedding_kind", cfg.model.embedding.kind}, {"layers", layers},
                        {"embedding_params", embedding}, {"body_params", body},
                        {"head_params", total - embedding - body}, {"total_params", total},
                        {"train_flops_per_token", model.train_flops_per_token(T)}};
  if (json) {
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("{:>5} {:>16} {:>8} {:>14} {:>14} {:>14}\n", "layer", "mixer", "d_ff",
                           "mixer params", "mlp params", "params");
  for (const auto& l : layers)
    std::cout << fmt::format("{:>5} {:>16} {:>8} {:>14} {:>14} {:>14}\n", l["layer"].get<int>(),
                             l["mixer"].get<std::string>(), l["d_ff"].get<int64_t>(),
                             l["mixer_params"].get<int64_t>(), l["mlp_params"].get<int64_t>(),
                             l["params"].get<int64_t>());
  std::cout << fmt::format("embedding ({}) {}\nbody {}\nhead {}\ntotal {}\ntraining FLOPs/token at T={}: {:.4g}\n",
                           cfg.model.embedding.kind, embedding, body, total - embedding - body, total, T,
                           model.train_flops_per_token(T));
}

}  // namespace

void register_inspect(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Parameters, per-layer widths and FLOPs of a config");
  cmd->footer("Example:\n  ember inspect -c configs/tiny.yaml --json");
  auto args = std::make_shared<ConfigArgs>();
  auto json = std::make_shared<bool>(false);
  add_config_options(*cmd, *args, true);
  cmd->add_flag("--json", *json, "Print JSON");
  cmd->callback([args, json] { run_inspect(*args, *json); });
}

}  // namespace ember::cli
