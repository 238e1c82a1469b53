// A checkpoint written by every rank of a job (or by its one process). Components of shared scope
// (io/component_state.h) are saved by rank 0; each per-rank component by every rank into the
// staging directory as <name>_shard_<rank>; a barrier and a check that every shard is there come
// before rank 0 seals the checkpoint (SHA256SUMS, `latest`), so a crash mid-save leaves the previous
// checkpoint in force. A rank whose part fails stops every rank with the reason (distributed/together.h).
// Loading merges the shards again (CheckpointData::merged), for any world size.
#pragma once
#include <filesystem>

#include "ember/distributed/communicator.h"
#include "ember/run/checkpoint.h"

namespace ember {

// The ranks of a job as the writer needs them; comm null: one process.
struct RankGroup {
  int rank = 0, world = 1;
  Communicator* comm = nullptr;
};

// Saves `components` as checkpoint `step`; returns its directory on rank 0 (empty on the others).
std::filesystem::path write_checkpoint(Checkpointer& checkpointer, const NamedComponents& components, int64_t step,
                                       const RankGroup& ranks);

}  // namespace ember
