// `ember capacity simulate` (random and optimised packing sweeps) and `ember capacity fit`
// (the capacity constants from such a sweep), docs/capacity.md "The packing simulation".
#include <fmt/ranges.h>

#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "ember/analysis/capacity_fit.h"
#include "ember/analysis/packing_points.h"
#include "ember/util/error.h"
#include "ember/util/log.h"

namespace ember::cli {
namespace {

enum class SimulateMode { random, optimised, both };
std::span<const EnumName<SimulateMode>> enum_names(SimulateMode) {
  static constexpr EnumName<SimulateMode> names[] = {
      {SimulateMode::random, "random"}, {SimulateMode::optimised, "optimised"}, {SimulateMode::both, "both"}};
  return names;
}

// The value of `flag` spelled `name`; a UsageError listing the spellings otherwise.
template <class E>
E parse_choice(const std::string& name, const std::string& flag) {
  E value{};
  if (!enum_from_name(name, value))
    throw UsageError(flag + ": expected " + fmt::format("{}", fmt::join(enum_spellings<E>(), ", ")) + ", got '" +
                     name + "'");
  return value;
}

struct SimulateArgs {
  std::string mode = "both", ks = "2000:32000:2000", ds = "256:4096:256", out, device = "auto";
  int64_t draws = 1000, steps = 5000;
  uint64_t seed = 0;
};

struct FitArgs {
  std::string file, form = "all", kind = "auto";
  bool json = false;
};

// "200,400" or "2000:32000:2000" (first:last:step, inclusive).
std::vector<int64_t> parse_grid(const std::string& spec, const std::string& flag) {
  std::vector<int64_t> out;
  try {
    if (spec.find(':') != std::string::npos) {
      std::stringstream ss(spec);
      std::string a, b, c;
      std::getline(ss, a, ':'), std::getline(ss, b, ':'), std::getline(ss, c, ':');
      const int64_t first = std::stoll(a), last = std::stoll(b), step = std::stoll(c);
      if (step <= 0 || last < first) throw std::invalid_argument("range");
      for (int64_t v = first; v <= last; v += step) out.push_back(v);
    } else {
      std::stringstream ss(spec);
      std::string cell;
      while (std::getline(ss, cell, ',')) out.push_back(std::stoll(cell));
    }
  } catch (const std::exception&) {
    out.clear();
  }
  for (int64_t v : out)
    if (v < 1) out.clear();
  if (out.empty())
    throw UsageError(flag + ": expected positive integers as 'a,b,c' or 'first:last:step', got '" + spec + "'");
  return out;
}

void run_simulate(const SimulateArgs& a) {
  const auto mode = parse_choice<SimulateMode>(a.mode, "--mode");
  SweepOptions o;
  o.ks = parse_grid(a.ks, "--k");
  o.ds = parse_grid(a.ds, "--d");
  o.random = mode != SimulateMode::optimised;
  o.optimised = mode != SimulateMode::random;
  o.draws = a.draws;
  o.steps = a.steps;
  o.seed = a.seed;
  o.device = resolve_device(a.device, "--device");
  write_points(a.out, {});  // fail on a bad path now, not after hours of simulation
  log::info("simulate: {} k x {} d on {}{}{}; writing {}", o.ks.size(), o.ds.size(), o.device.str(),
            o.random ? fmt::format(", random: {} draws", o.draws) : "",
            o.optimised ? fmt::format(", optimised: {} Adam steps", o.steps) : "", a.out);
  const auto points =
      run_packing_sweep(o, [&](const std::vector<PackingPoint>& so_far) { write_points(a.out, so_far); });
  std::cout << points_csv(points);
}

void print_fits(const std::vector<CapacityFit>& fits) {
  std::cout << fmt::format("{:<7} {:<10} {:>6} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9}  {}\n", "form", "points", "n",
                           "C", "a", "b", "c", "R^2", "MAPE %", "RMSE", "fitted");
  for (const auto& f : fits) {
    std::string params;
    for (size_t i = 0; i < 4; ++i)
      params += i < f.params.size() ? fmt::format(" {:>{}.6g}", f.params[i], i ? 9 : 10)
                                    : fmt::format(" {:>{}}", "", i ? 9 : 10);
    std::cout << fmt::format("{:<7} {:<10} {:>6}{} {:>9.5f} {:>8.3f} {:>9.3g}  {}{}\n", enum_name(f.form),
                             enum_name(f.points_kind), f.points, params, f.r2, f.mape, f.rmse, form_formula(f.form),
                             f.converged ? "" : " (did not converge)");
  }
  for (const auto& f : fits)
    if (f.form == CapacityForm::full)
      std::cout << fmt::format(
          "\nUse the full-form constants: ember capacity ... --constants {:.8g},{:.8g},{:.8g},{:.8g}\n", f.params[0],
          f.params[1], f.params[2], f.params[3]);
}

void run_fit(const FitArgs& a) {
  const auto choice = parse_choice<FitPoints>(a.kind, "--kind");
  const auto points = read_points(a.file);
  std::vector<CapacityForm> forms;
  if (a.form == "all")
    forms = {CapacityForm::jl, CapacityForm::single, CapacityForm::full};
  else
    forms = {parse_form(a.form)};
  std::vector<CapacityFit> fits;
  for (auto form : forms) {
    const auto [chosen, resolved] = fit_points(points, choice, form);
    const std::string kind = enum_name(resolved);
    if (chosen.empty()) throw DataError(a.file + ": no '" + kind + "' points to fit the " + enum_name(form) + " form");
    const size_t constants = form == CapacityForm::full ? 4 : 1;
    if (a.form == "all" && chosen.size() <= constants) {  // a small grid still gets the forms it can fit
      std::cerr << fmt::format(
          "fit: the {} form needs more than {} '{}' points, the file has {}: not fitted (simulate "
          "a larger grid)\n",
          enum_name(form), constants, kind, chosen.size());
      continue;
    }
    fits.push_back(fit_capacity_form(form, chosen));
    fits.back().points_kind = resolved;
  }
  if (fits.empty()) throw DataError(a.file + ": too few points to fit any form");
  if (a.json) return print_json_array(fits, fit_json);
  print_fits(fits);
}

}  // namespace

void add_capacity_simulate(CLI::App& capacity) {
  auto* cmd = capacity.add_subcommand("simulate", "Random and optimised vector-packing sweeps over a (k, d) grid");
  cmd->footer(
      "Defaults are the paper's grid (k 2000..32000 step 2000, d 256..4096 step 256, 1000 draws,\n"
      "5000 Adam steps): GPU work. Results are rewritten to --out after every point.\n"
      "Examples:\n"
      "  ember capacity simulate --k 200,400 --d 16,32 --draws 20 --steps 300 --out sweep.csv   # minutes on a CPU\n"
      "  ember capacity simulate --mode optimised --device cuda --out optimised.json            # the paper's grid");
  auto args = std::make_shared<SimulateArgs>();
  cmd->add_option("--out", args->out, "Results file: .csv or .json")->required();
  cmd->add_option("--mode", args->mode, "random, optimised or both")->capture_default_str();
  cmd->add_option("--k", args->ks, "Numbers of vectors: 'a,b,c' or 'first:last:step'")->capture_default_str();
  cmd->add_option("--d", args->ds, "Dimensions: 'a,b,c' or 'first:last:step'")->capture_default_str();
  cmd->add_option("--draws", args->draws, "Random sets drawn per point")->capture_default_str();
  cmd->add_option("--steps", args->steps, "Adam steps per optimised point")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed; each point derives its own from it")->capture_default_str();
  cmd->add_option("--device", args->device, "auto, cpu or cuda")->capture_default_str();
  cmd->callback([args] { run_simulate(*args); });
}

void add_capacity_fit(CLI::App& capacity) {
  auto* cmd = capacity.add_subcommand("fit", "Fit the capacity formulas' constants to simulate's points");
  cmd->footer(
      "Least squares on epsilon (Levenberg-Marquardt): the JL form to random packings, the\n"
      "single-constant and full forms to optimised ones; reports constants, R^2 and MAPE.\n"
      "Also reads the reference's [[k, d, eps], ...] JSON.\n"
      "Examples:\n"
      "  ember capacity fit sweep.csv\n"
      "  ember capacity fit optimized_packing.json --form full --kind all --json");
  auto args = std::make_shared<FitArgs>();
  cmd->add_option("file", args->file, "CSV or JSON written by `ember capacity simulate`")->required();
  cmd->add_option("--form", args->form, "all, jl, single or full")->capture_default_str();
  cmd->add_option("--kind", args->kind, "Points to fit: auto, random, optimised or all")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print a JSON array");
  cmd->callback([args] { run_fit(*args); });
}

}  // namespace ember::cli
