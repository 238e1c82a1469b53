// train.debug_nonfinite: when a step's loss or gradient is not finite, find where it started.
// Replays the step's micro-batches under a NonfiniteTrace (model/nonfinite_trace.h), forward and
// then backward, and writes into `dir`: batch_<i>.npy (the token ids [B, T + 1], numpy-readable)
// and report.json (the pass, the micro-batch, the scopes and op of the first non-finite tensor,
// its summary and its inputs'). Parameters already non-finite before the step are named instead.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "ember/model/lm.h"

namespace ember {

struct NonfiniteReplay {
  at::Device device = at::kCPU;
  bool bf16 = false;  // replay under the same autocast as training
};

// Returns one line for the log and the error ("forward of micro-batch 0: layers.2 > mixer > ...").
// The model's gradients are cleared afterwards.
std::string investigate_nonfinite(LanguageModel& model, const std::vector<at::Tensor>& batches,
                                  const NonfiniteReplay& replay, const std::filesystem::path& dir);

}  // namespace ember
