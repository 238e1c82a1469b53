// ember's subcommands: each registers itself on the CLI11 app and runs the library.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "ember/experiment/sweep_runner.h"
#include "ember/train/device_choice.h"  // resolve_device, for every --device

namespace ember::cli {

// CLI11's PositiveNumber / NonNegativeNumber report "Value 0 not in range 0.000000 to 1.797e308";
// these say plainly what is wrong ("--block: must be positive, got 0").
inline CLI::Validator number_at_least(double lowest, bool strict, const char* what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "expected a number, got '" + text + "'";
        return (strict ? v > lowest : v >= lowest) ? "" : std::string("must be ") + what + ", got " + text;
      },
      what);
}
inline const CLI::Validator kPositive = number_at_least(0, true, "positive");
inline const CLI::Validator kNonNegative = number_at_least(0, false, "non-negative");

struct ConfigArgs {
  std::vector<std::string> files;
  std::vector<std::string> overrides;
};
void add_config_options(CLI::App& cmd, ConfigArgs& args, bool required);
// The kinds of every seam (from the registries), for --help footers and `ember config --kinds`.
nlohmann::json kinds_json();
std::string kinds_help();

void register_train(CLI::App& app);
void register_eval(CLI::App& app);
void register_generate(CLI::App& app);
void register_prepare(CLI::App& app);
void register_inspect(CLI::App& app);
void register_kernels(CLI::App& app);
void register_config(CLI::App& app);
void register_analyze(CLI::App& app);
void register_tokenizer(CLI::App& app);
void register_prepare_text(CLI::App& prepare);     // under `ember prepare`
void register_prepare_lambada(CLI::App& prepare);  // under `ember prepare`
void register_prepare_recall(CLI::App& prepare);   // under `ember prepare`
void register_capacity(CLI::App& app);
void register_launch(CLI::App& app);
void register_sweep(CLI::App& app);
void register_report(CLI::App& app);
void register_ladder(CLI::App& app);  // ember ladder plan|run|report
void register_export(CLI::App& app);  // ember export hf
void register_import(CLI::App& app);  // ember import hf

// How `ember sweep` and `ember ladder run` run their members (experiment/sweep_runner.h): --parallel,
// --member, --launch, --emit slurm, --sbatch-option, --dry-run; `unit` names a member in the help.
enum class SweepEmit { none, slurm };
struct SweepRunArgs {
  std::string file;
  SweepRunOptions options;
  SweepEmit emit = SweepEmit::none;
  std::vector<std::string> sbatch_options;
  bool dry_run = false;
};
void add_sweep_run_options(CLI::App& cmd, SweepRunArgs& args, const std::string& unit);
// --dry-run: "[i] name: the training command", one line per member.
void print_sweep_commands(const SweepSpec& spec, const std::vector<SweepMember>& members, const SweepRunOptions& options);

// `ember capacity simulate` and `ember capacity fit`, registered under `capacity`.
void add_capacity_simulate(CLI::App& capacity);
void add_capacity_fit(CLI::App& capacity);
// Prints --json output: one JSON array, an element per item.
template <class T, class ToJson>
void print_json_array(const std::vector<T>& items, ToJson to_json) {
  auto out = nlohmann::json::array();
  for (const auto& item : items) out.push_back(to_json(item));
  std::cout << out.dump(2) << "\n";
}

}  // namespace ember::cli
