// What `auto` in the `kernels:` section (ember/kernels/kernels_config.h) means on this machine: the on-device
// check's table (model/kernel_check.h) for a key of the device's name, the torch version, the ember
// build and the precision. Checked the first time the key is seen and cached in the user's cache
// folder ($XDG_CACHE_HOME/ember/kernels, else ~/.cache/ember/kernels), one JSON file per key; a
// cache file that does not read back is checked anew and rewritten.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ember/model/kernel_check.h"
#include "ember/kernels/kernel_choice.h"

namespace ember {

struct KernelTable {
  std::string key;
  std::vector<KernelCheckRow> rows;  // one per op, in kernels::kAllOps order
  std::string source;                // "checked now" or the cache file it was read from
  const KernelCheckRow& row(kernels::Op op) const;
  bool all_agree() const;
};

std::string kernel_table_key(const at::Device& device, bool bf16);
std::filesystem::path kernel_cache_dir();

enum class CacheUse {
  read,        // the cached table; else check now and cache it (unless another process cached one first)
  check,       // check now; cache the result only where no table is cached
  replace,     // check now and replace the cached table
};
// The table of `device` in `bf16` or fp32.
KernelTable kernel_table(const at::Device& device, bool bf16, CacheUse use = CacheUse::read);
// The cached table alone (nullopt when there is none, with a warning when the file does not read back).
std::optional<KernelTable> cached_kernel_table(const at::Device& device, bool bf16);

// The path each op takes: as `asked` says, and where it says auto, the table's choice (a table is
// needed only then). One warning per op whose fused path disagreed with ATen.
kernels::Choices resolve_kernels(const kernels::Choices& asked, const KernelTable* table);

// "loss_head=fused norm=fused ..." in kernels::kAllOps order.
std::string describe_choices(const kernels::Choices& choices);
// The ops whose path differs, as "norm fused -> aten".
std::vector<std::string> changed_choices(const kernels::Choices& before, const kernels::Choices& after);

// The table as text (op, agreement, error, fused ms, ATen ms, choice) and as JSON.
std::string format_kernel_table(const KernelTable& table);
nlohmann::json kernel_table_json(const KernelTable& table);

// Choices as a run records them ({"norm": "fused", ...}); nullopt for JSON that is not such a record.
nlohmann::json choices_json(const kernels::Choices& choices);
std::optional<kernels::Choices> choices_from_json(const nlohmann::json& j);

}  // namespace ember
