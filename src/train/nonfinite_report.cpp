#include "ember/train/nonfinite_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ember/io/npy.h"
#include "ember/model/autocast.h"
#include "ember/model/nonfinite_trace.h"
#include "ember/util/files.h"

namespace ember {
namespace {

nlohmann::json summary_json(const TensorSummary& s) {
  return {{"shape", s.shape}, {"dtype", s.dtype}, {"nan", s.nan}, {"inf", s.inf}, {"finite_max_abs", s.max_abs}};
}

std::vector<std::string> nonfinite_parameters(LanguageModel& model) {
  std::vector<std::string> names;
  for (const auto& p : model.named_parameters())
    if (!summarize(p.value()).finite()) names.push_back(p.key());
  return names;
}

struct Located {
  std::string pass;  // "forward" or "backward"
  int64_t micro = 0;
  NonfiniteFinding finding;
};

// The first micro-batch whose forward, or else backward, produces a non-finite tensor.
std::optional<Located> replay_batches(LanguageModel& model, const std::vector<at::Tensor>& batches,
                                      const NonfiniteReplay& replay) {
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto batch = batches[i].to(replay.device);
    const int64_t T = batch.size(1) - 1;
    NonfiniteTrace trace;
    at::Tensor loss;
    {
      AutocastScope autocast(replay.device, replay.bf16);
      loss = model.loss(batch.narrow(1, 0, T), batch.narrow(1, 1, T));
    }
    if (auto f = trace.first()) return Located{"forward", static_cast<int64_t>(i), *f};
    loss.backward();
    if (auto f = trace.first()) return Located{"backward", static_cast<int64_t>(i), *f};
  }
  return std::nullopt;
}

}  // namespace

std::string investigate_nonfinite(LanguageModel& model, const std::vector<at::Tensor>& batches,
                                  const NonfiniteReplay& replay, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  nlohmann::json report = nlohmann::json::object();
  std::vector<std::string> files;
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto name = fmt::format("batch_{}.npy", i);
    save_npy(dir / name, batches[i]);
    files.push_back(name);
  }
  report["batches"] = files;
  std::string line;
  const auto bad = nonfinite_parameters(model);
  if (!bad.empty()) {
    report["nonfinite_parameters"] = bad;
    line = fmt::format("{} parameter(s) were already non-finite before the step, first '{}'", bad.size(), bad[0]);
  } else if (const auto found = replay_batches(model, batches, replay)) {
    const auto& f = found->finding;
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& in : f.inputs) inputs.push_back(summary_json(in));
    report["first_nonfinite"] = {{"pass", found->pass}, {"micro_batch", found->micro}, {"scopes", f.scopes},
                                 {"op", f.op},          {"output", f.output},          {"value", summary_json(f.value)},
                                 {"inputs", inputs}};
    line = fmt::format("{} of micro-batch {}: output {} of {} went non-finite ({})", found->pass, found->micro,
                       f.output, f.where(), describe(f.value));
    for (size_t i = 0; i < f.inputs.size(); ++i) line += fmt::format("; input {}: {}", i, describe(f.inputs[i]));
    for (const auto& in : f.inputs)
      if (!in.finite()) {  // produced by code the dispatcher does not see (a fused kernel's raw loop)
        line += " (an input was already non-finite: it came from code outside ATen's ops, the scope's own kernel)";
        break;
      }
  } else {
    line = "the replay of the step's batches stayed finite (the step did not reproduce)";
  }
  model.zero_grad();
  report["summary"] = line;
  write_file_atomic(dir / "report.json", report.dump(2) + "\n");
  return line + fmt::format(" [batches and report.json in {}]", std::filesystem::absolute(dir).string());
}

}  // namespace ember
