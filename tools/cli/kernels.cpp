// ember kernels: the on-device check of the fused ops against ATen's (model/kernel_check.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "cli/commands.h"
#include "ember/model/kernel_table.h"
#include "ember/util/error.h"

namespace ember::cli {
namespace {

struct KernelsArgs {
  std::string device = "auto";
  std::string precision = "fp32";
  bool cached = false;
  bool save = false;
  bool json = false;
};

void run_kernels(const KernelsArgs& a) {
  const auto device = resolve_device(a.device, "--device");
  const auto use = a.cached ? CacheUse::read : a.save ? CacheUse::replace : CacheUse::check;
  const auto table = kernel_table(device, a.precision == "bf16", use);
  if (a.json) std::cout << kernel_table_json(table).dump(2) << "\n";
  else std::cout << format_kernel_table(table);
  std::vector<std::string> bad;
  for (const auto& r : table.rows)
    if (!r.agrees) bad.push_back(kernels::op_name(r.op));
  if (!bad.empty())
    throw Error(fmt::format("kernels: ember's fused {} disagree(s) with ATen on this device; runs with kernels.* = "
                            "auto use ATen's ops for them",
                            fmt::join(bad, ", ")));
}

}  // namespace

void register_kernels(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "kernels", "Check ember's fused ops against ATen's on this device and time both (what kernels.* = auto uses)");
  cmd->footer(
      "Each fused op (loss head, RMSNorm with its residual add, SwiGLU gate, RoPE, stacked projections,\n"
      "LEV's spline product) runs forward and backward on small random inputs through ember's kernel\n"
      "and through ATen's ops; outputs and gradients are compared element by element within the\n"
      "precision's tolerance. auto takes the fused path where it agrees and is not slower. The table is\n"
      "cached per device, torch version, ember build and precision ($XDG_CACHE_HOME/ember/kernels or\n"
      "~/.cache/ember/kernels): runs keep the first table cached for a key, so that their choices stay\n"
      "put; this command checks again and caches its table only where none is (--save replaces it,\n"
      "--cached shows it).\n"
      "Exits 1 when a fused op disagrees.\n\n"
      "Examples:\n"
      "  ember kernels\n"
      "  ember kernels --device cuda --precision bf16\n"
      "  ember kernels --cached --json");
  auto args = std::make_shared<KernelsArgs>();
  cmd->add_option("--device", args->device, "auto (CUDA when available), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--precision", args->precision, "fp32, or bf16 (autocast, as train.precision = bf16)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd->add_flag("--cached", args->cached, "show the cached table (checking only when there is none)");
  cmd->add_flag("--save", args->save, "replace the cached table with this check's (what later runs' auto takes)");
  cmd->add_flag("--json", args->json, "print the table as JSON");
  cmd->callback([args] { run_kernels(*args); });
}

}  // namespace ember::cli
