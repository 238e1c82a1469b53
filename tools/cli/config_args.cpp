#include "cli/commands.h"

#include <iostream>

#include "ember/config/config.h"

namespace ember::cli {

void add_config_options(CLI::App& cmd, ConfigArgs& args, bool required) {
  auto* c = cmd.add_option("-c,--config", args.files,
                           "YAML config file; several are merged in order (later wins)");
  c->allow_extra_args(false);  // one file per -c; repeat -c for more
  if (required) c->required();
  cmd.add_option("--set", args.overrides, "Override one key, e.g. --set train.steps=500 (repeatable)")
      ->allow_extra_args(false);
}

void register_config(CLI::App& app) {
  auto* cmd = app.add_subcommand("config", "Print the fully resolved, validated config");
  cmd->footer("Example:\n  ember config -c configs/tiny.yaml --set model.d_model=256");
  auto args = std::make_shared<ConfigArgs>();
  add_config_options(*cmd, *args, true);
  cmd->callback([args] { std::cout << to_yaml(load_config(args->files, args->overrides)); });
}

}  // namespace ember::cli
