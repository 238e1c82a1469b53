// How often each token id occurs in a run's training data: the train_token_counts.json that
// `prepare` writes beside the shards (named by the manifest), or, when there is none (shards made
// elsewhere), a count over the training shards themselves.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

// Counts for ids 0 .. vocab - 1 (ids the counts file does not reach count 0). DataError naming the
// file when the counts do not fit the vocabulary or the file is malformed.
std::vector<int64_t> training_token_counts(const std::vector<std::string>& train_specs, int64_t vocab);

}  // namespace ember
