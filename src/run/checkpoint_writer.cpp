#include "ember/run/checkpoint_writer.h"

#include <fmt/format.h>

#include "ember/distributed/together.h"
#include "ember/util/error.h"

namespace ember {
namespace {

constexpr const char* kSameRunDirectory =
    "every rank must write to the same run directory (on several nodes, a shared filesystem)";

// Every rank's shard of each per-rank component is in the staging directory (they all write to the
// same run directory: on several nodes, a shared filesystem).
void require_every_shard(const std::filesystem::path& staging, const NamedComponents& components, int world) {
  for (const auto& [name, component] : components) {
    if (component->scope() != StateScope::per_rank) continue;
    for (int r = 0; r < world; ++r)
      if (!std::filesystem::exists(staging / (component_shard(name, r) + kTensorExt)))
        throw CheckpointError(fmt::format("checkpoint: rank {}'s {} shard is not in '{}'; {}", r, name,
                                          staging.string(), kSameRunDirectory));
  }
}

}  // namespace

std::filesystem::path write_checkpoint(Checkpointer& checkpointer, const NamedComponents& components, int64_t step,
                                       const RankGroup& ranks) {
  const bool main = ranks.rank == 0;
  bool sharded = false;
  for (const auto& [name, component] : components) sharded = sharded || component->scope() == StateScope::per_rank;
  // Every phase is one all-ranks agreement (together), which is also the barrier between phases:
  // rank 0's own part failing (a full disk under model.safetensors) stops the others as well.
  const auto shared_states = [&] { return save_components(components, StateScope::shared); };
  std::filesystem::path dir;
  if (!sharded) {
    together(ranks.comm, ranks.rank, "writing the checkpoint", [&] {
      if (main) dir = checkpointer.save(shared_states(), step);
    });
    return dir;
  }
  together(ranks.comm, ranks.rank, "starting the checkpoint", [&] {
    if (main) checkpointer.begin(step);  // the staging directory exists before any rank writes
  });
  const auto staging = checkpointer.staging_dir(step);
  together(ranks.comm, ranks.rank, "writing the checkpoint's shards", [&] {
    if (!std::filesystem::is_directory(staging))
      throw CheckpointError(fmt::format("checkpoint: rank {} does not see the staging directory '{}' that rank 0 "
                                        "made; {}",
                                        ranks.rank, staging.string(), kSameRunDirectory));
    for (const auto& [name, component] : components)
      if (component->scope() == StateScope::per_rank)
        Checkpointer::write_tensors(staging, component_shard(name, ranks.rank), component->save_state());
  });
  together(ranks.comm, ranks.rank, "sealing the checkpoint", [&] {
    if (!main) return;
    require_every_shard(staging, components, ranks.world);
    dir = checkpointer.seal(staging, shared_states(), step);
  });
  return dir;
}

}  // namespace ember
