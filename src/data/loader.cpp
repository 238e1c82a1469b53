#include "ember/data/loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "ember/util/error.h"

namespace ember {

nlohmann::json LoaderState::to_json() const { return {{"epoch", epoch}, {"cursor", cursor}}; }

LoaderState LoaderState::from_json(const nlohmann::json& j) {
  return {j.at("epoch").get<int64_t>(), j.at("cursor").get<int64_t>()};
}

BatchLoader::BatchLoader(const std::vector<std::filesystem::path>& shards, LoaderOptions opt) : opt_(opt) {
  const int64_t T = opt.seq_len;
  for (const auto& p : shards) {
    shards_.push_back(std::make_unique<ShardFile>(p));
    const int64_t n = shards_.back()->size();
    for (int64_t k = 0; k * T + T + 1 <= n; ++k) windows_.push_back({static_cast<int32_t>(shards_.size() - 1), k * T});
  }
  if (windows_.empty())
    throw DataError("shards starting with '" + shards.front().string() + "' hold " + std::to_string(total_tokens()) +
                    " tokens: too few for one window of seq_len+1 = " + std::to_string(T + 1));
  build_order(0);
}

void BatchLoader::build_order(int64_t epoch) {
  order_.resize(windows_.size());
  std::iota(order_.begin(), order_.end(), 0);
  if (!opt_.shuffle) return;
  // Fisher-Yates with mt19937_64 (whose output the standard fixes), seeded by (seed, epoch).
  std::mt19937_64 rng(opt_.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch) + 1);
  for (size_t i = order_.size() - 1; i > 0; --i) std::swap(order_[i], order_[rng() % (i + 1)]);
}

const BatchLoader::Window& BatchLoader::window_at(int64_t cursor) const {
  return windows_[static_cast<size_t>(order_[static_cast<size_t>(cursor)])];
}

at::Tensor BatchLoader::next() {
  const int64_t B = opt_.batch, T = opt_.seq_len;
  auto out = at::empty({B, T + 1}, at::kLong);
  int64_t* data = out.data_ptr<int64_t>();
  for (int64_t slot = 0; slot < B * opt_.world; ++slot) {
    if (state_.cursor >= windows_per_epoch()) {
      state_.epoch += 1;
      state_.cursor = 0;
      build_order(state_.epoch);
    }
    const Window& w = window_at(state_.cursor++);
    const int64_t row = slot - opt_.rank * B;
    if (row >= 0 && row < B) shards_[w.shard]->copy(w.offset, T + 1, data + row * (T + 1));
  }
  return out;
}

at::Tensor BatchLoader::next_in_epoch() {
  const int64_t B = opt_.batch, T = opt_.seq_len;
  const int64_t left = std::min(windows_per_step(), windows_per_epoch() - state_.cursor);
  const int64_t first = opt_.rank * B;  // this rank's slots: [first, first + B) of the step's
  const int64_t rows = std::clamp<int64_t>(left - first, 0, B);
  auto out = at::empty({rows, T + 1}, at::kLong);
  int64_t* data = out.data_ptr<int64_t>();
  for (int64_t row = 0; row < rows; ++row) {
    const Window& w = window_at(state_.cursor + first + row);
    shards_[w.shard]->copy(w.offset, T + 1, data + row * (T + 1));
  }
  state_.cursor += left;
  return out;
}

void BatchLoader::restore(const LoaderState& s) {
  if (s.cursor < 0 || s.cursor > windows_per_epoch())
    throw DataError("loader state cursor " + std::to_string(s.cursor) + " is outside the " +
                    std::to_string(windows_per_epoch()) + " windows of these shards (data changed?)");
  state_ = s;
  build_order(s.epoch);
}

int64_t BatchLoader::total_tokens() const {
  int64_t n = 0;
  for (const auto& s : shards_) n += s->size();
  return n;
}

uint32_t BatchLoader::max_token() const {
  uint32_t m = 0;
  for (const auto& s : shards_) m = std::max(m, s->max_token());
  return m;
}

std::pair<std::string, int64_t> BatchLoader::next_position() const {
  if (state_.cursor >= windows_per_epoch()) return {"(next epoch)", 0};
  const Window& w = window_at(state_.cursor);
  return {shards_[w.shard]->path().string(), w.offset};
}

ComponentState BatchLoader::save_state() const {
  const auto [shard, position] = next_position();
  nlohmann::json j = state_.to_json();
  j["shard"] = shard;  // informational
  j["position"] = position;
  return {{}, j};
}

void BatchLoader::load_state(const ComponentState& state, const std::string& where) {
  try {
    restore(LoaderState::from_json(state.json));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(where + ": the loader state in state.json is malformed: " + e.what());
  } catch (const DataError& e) {
    throw CheckpointError(where + ": " + e.what());
  }
}

std::unique_ptr<BatchLoader> open_loader(const std::vector<std::string>& specs, const std::string& key,
                                         const LoaderOptions& opt, int64_t vocab) {
  auto loader = std::make_unique<BatchLoader>(resolve_shards(specs, key), opt);
  const uint32_t max_id = loader->max_token();
  if (static_cast<int64_t>(max_id) >= vocab)
    throw DataError(
        fmt::format("{}: token id {} does not fit model.vocab_size = {} (wrong tokenizer or vocab size "
                    "for this data?)",
                    key, max_id, vocab));
  return loader;
}

}  // namespace ember
