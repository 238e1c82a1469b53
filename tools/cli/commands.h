// ember's subcommands: each registers itself on the CLI11 app and runs the library.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace ember::cli {

struct ConfigArgs {
  std::vector<std::string> files;
  std::vector<std::string> overrides;
};
void add_config_options(CLI::App& cmd, ConfigArgs& args, bool required);

void register_train(CLI::App& app);
void register_eval(CLI::App& app);
void register_prepare(CLI::App& app);
void register_inspect(CLI::App& app);
void register_config(CLI::App& app);
void register_analyze(CLI::App& app);
void register_tokenizer(CLI::App& app);
void register_prepare_text(CLI::App& prepare);  // under `ember prepare`

}  // namespace ember::cli
