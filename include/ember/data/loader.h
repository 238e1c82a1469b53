// Batches of [B, T+1] token windows from a set of shards. Windows start at multiples of T; each
// epoch visits all of them in an order fixed by (seed, epoch). The state (epoch, cursor) is small
// and serialisable, so a resumed run sees exactly the batches it would have seen. With several
// ranks, each step takes B x world windows and rank r uses the r-th slice.
#pragma once
#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <vector>

#include "ember/data/shard.h"
#include "ember/io/component_state.h"

namespace ember {

struct LoaderState {
  int64_t epoch = 0;
  int64_t cursor = 0;  // next window, in this epoch's order
  nlohmann::json to_json() const;
  static LoaderState from_json(const nlohmann::json& j);
};

struct LoaderOptions {
  int64_t batch = 1;
  int64_t seq_len = 1;
  uint64_t seed = 0;
  bool shuffle = true;
  int rank = 0;
  int world = 1;
};

// A checkpoint component: its state (epoch, cursor) and, for people, where the next batch starts.
class BatchLoader final : public Stateful {
 public:
  BatchLoader(const std::vector<std::filesystem::path>& shards, LoaderOptions opt);

  at::Tensor next();  // [B, T+1] int64
  // The next step's windows without crossing into the next epoch: [rows, T+1], rows <= B, fewer
  // (possibly none on this rank) when the epoch has fewer than B x world windows left. For
  // evaluation passes, which must score every window once.
  at::Tensor next_in_epoch();
  int64_t windows_per_step() const { return opt_.batch * opt_.world; }
  LoaderState state() const { return state_; }
  void restore(const LoaderState& s);
  int64_t windows_per_epoch() const { return static_cast<int64_t>(windows_.size()); }
  int64_t total_tokens() const;
  uint32_t max_token() const;  // largest id over all shards (a full scan)
  // Where the next window comes from, for logs and state.json.
  std::pair<std::string, int64_t> next_position() const;
  ComponentState save_state() const override;
  void load_state(const ComponentState& state, const std::string& where) override;

 private:
  struct Window {
    int32_t shard;
    int64_t offset;
  };
  void build_order(int64_t epoch);
  const Window& window_at(int64_t cursor) const;

  std::vector<std::unique_ptr<ShardFile>> shards_;
  std::vector<Window> windows_;
  std::vector<int64_t> order_;  // permutation of windows_ for state_.epoch
  LoaderOptions opt_;
  LoaderState state_;
};

// A loader over `specs` (files, directories, globs) whose ids all fit `vocab`; errors name `key`
// (e.g. data.val, --data) and say which id does not fit.
std::unique_ptr<BatchLoader> open_loader(const std::vector<std::string>& specs, const std::string& key,
                                         const LoaderOptions& opt, int64_t vocab);

}  // namespace ember
