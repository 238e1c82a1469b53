#include "ember/eval/recall_scoring.h"

#include <map>

namespace ember {
namespace {

// Greedy hits at the answer positions of `group` (sequences of one length).
int64_t recall_hits(LanguageModel& model, const std::vector<const RecallSequence*>& group, at::Device device) {
  const int64_t B = static_cast<int64_t>(group.size()), L = static_cast<int64_t>(group.front()->tokens.size());
  auto ids = at::empty({B, L}, at::kLong);
  auto* p = ids.data_ptr<int64_t>();
  for (const auto* s : group) p = std::copy(s->tokens.begin(), s->tokens.end(), p);
  const auto predicted = model.forward(ids.to(device)).argmax(-1).cpu();  // [B, L]: the token after each position
  const auto* pred = predicted.data_ptr<int64_t>();
  int64_t hits = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t a : group[static_cast<size_t>(b)]->answers)
      hits += pred[b * L + a - 1] == static_cast<int64_t>(group[static_cast<size_t>(b)]->tokens[static_cast<size_t>(a)]);
  return hits;
}

}  // namespace

RecallTally score_recall_task(LanguageModel& model, const std::vector<RecallSequence>& items, at::Device device,
                              int64_t batch) {
  at::NoGradGuard no_grad;
  std::map<size_t, std::vector<const RecallSequence*>> by_length;
  for (const auto& s : items) by_length[s.tokens.size()].push_back(&s);
  RecallTally tally;
  for (const auto& [length, all] : by_length)
    for (size_t start = 0; start < all.size(); start += static_cast<size_t>(batch)) {
      std::vector<const RecallSequence*> group(all.begin() + static_cast<std::ptrdiff_t>(start),
                                               all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), start + batch)));
      tally.correct += recall_hits(model, group, device);
      for (const auto* s : group) tally.answers += static_cast<int64_t>(s->answers.size());
      tally.items += static_cast<int64_t>(group.size());
    }
  return tally;
}

}  // namespace ember
