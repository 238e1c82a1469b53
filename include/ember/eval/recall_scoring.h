// Scoring the associative-recall task (data/recall_task.h): the share of queried values the model
// predicts greedily (the argmax of its distribution after the query key equals the value). Only the
// answer positions count: the rest of a sequence is random and unpredictable by design.
#pragma once
#include <vector>

#include "ember/data/recall_task.h"
#include "ember/model/lm.h"

namespace ember {

struct RecallTally {
  int64_t items = 0, answers = 0, correct = 0;
  double accuracy() const { return answers ? static_cast<double>(correct) / static_cast<double>(answers) : 0.0; }
};

// Sequences of one length go through the model `batch` at a time.
RecallTally score_recall_task(LanguageModel& model, const std::vector<RecallSequence>& items, at::Device device,
                              int64_t batch = 64);

}  // namespace ember
