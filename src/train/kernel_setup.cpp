#include "ember/train/kernel_setup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

#include "ember/distributed/communicator.h"
#include "ember/model/kernel_table.h"
#include "ember/util/log.h"

namespace ember {
namespace {

using kernels::Op;
using kernels::Path;

// Fused only where every rank chose fused.
kernels::Choices agreed(kernels::Choices c, Communicator* comm) {
  if (!comm) return c;
  std::vector<double> aten;
  for (Op op : kernels::kAllOps) aten.push_back(c[op] == Path::aten ? 1.0 : 0.0);
  aten = comm->sum(aten);
  for (size_t i = 0; i < aten.size(); ++i)
    if (aten[i] > 0) c[kernels::kAllOps[i]] = Path::aten;
  return c;
}

std::string where_auto_came_from(const std::optional<KernelTable>& table, bool kept) {
  if (!table) return "as configured";
  if (kept) return "auto as the run chose before, on the same device and build";
  return fmt::format("auto from the on-device check, {}", table->source == "checked now" ? "run now" : "cached in " + table->source);
}

}  // namespace

KernelSetup set_up_kernels(const KernelsConfig& cfg, const at::Device& device, bool bf16, Communicator* comm,
                           const nlohmann::json& resumed) {
  std::optional<KernelTable> table;
  if (cfg.any_automatic()) table = kernel_table(device, bf16);
  auto choices = resolve_kernels(cfg.choices, table ? &*table : nullptr);
  const auto before = resumed.is_object() ? choices_from_json(resumed.value("choices", nlohmann::json())) : std::nullopt;
  const bool same_key = before && table && resumed.value("key", std::string()) == table->key;
  if (same_key)  // the cache may have been checked again since: auto keeps what the run trained with
    for (Op op : kernels::kAllOps)
      if (cfg.choices[op] == Path::automatic) choices[op] = (*before)[op];
  choices = agreed(choices, comm);
  kernels::install(choices);
  log::info("kernels: {} ({})", describe_choices(choices), where_auto_came_from(table, same_key));
  if (before)
    if (const auto changed = changed_choices(*before, choices); !changed.empty())
      log::warn("resuming with other kernels than the run trained with: {} (kernels.* in the config, or auto on "
                "another device or build)",
                fmt::join(changed, "; "));
  KernelSetup s{choices, {{"choices", choices_json(choices)}}, nullptr};
  if (table) s.record["key"] = table->key, s.table = kernel_table_json(*table);
  return s;
}

}  // namespace ember
