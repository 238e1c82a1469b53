// What a training run measures besides its loss: perplexity on the validation set (every rank its
// slice of each batch, the token-weighted mean over ranks) and the embedding geometry
// (eval.capacity_every), each logged and written to metrics.jsonl.
#pragma once
#include <cstdint>

#include "ember/data/loader.h"
#include "ember/distributed/communicator.h"
#include "ember/eval/perplexity.h"
#include "ember/model/lm.h"
#include "ember/train/metrics_log.h"

namespace ember {

// The model is left in training mode.
EvalResult evaluate_across_ranks(LanguageModel& model, BatchLoader& val, int64_t batches, at::Device device,
                                 bool bf16, Communicator* comm);
void log_eval(const EvalResult& r, int64_t step, bool final_eval, MetricsLog& metrics);
// Sampled epsilon (docs/capacity.md) of the input table and the head.
void log_geometry(LanguageModel& model, int64_t step, int64_t pairs, MetricsLog& metrics);

}  // namespace ember
