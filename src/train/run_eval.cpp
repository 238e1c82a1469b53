#include "ember/train/run_eval.h"

#include <cmath>

#include "ember/analysis/epsilon.h"
#include "ember/util/log.h"

namespace ember {

EvalResult evaluate_across_ranks(LanguageModel& model, BatchLoader& val, int64_t batches, at::Device device,
                                 bool bf16, Communicator* comm) {
  model.eval();
  auto r = evaluate_perplexity(model, val, batches, device, bf16);
  if (comm) {  // each rank evaluated its own slice of every batch: token-weighted mean over all
    const auto sums =
        comm->sum(std::vector<double>{r.loss * static_cast<double>(r.tokens), static_cast<double>(r.tokens)});
    r.tokens = static_cast<int64_t>(sums[1]);
    r.loss = sums[0] / std::max(sums[1], 1.0);
    r.perplexity = std::exp(r.loss);
  }
  model.train();
  return r;
}

void log_eval(const EvalResult& r, int64_t step, bool final_eval, MetricsLog& metrics) {
  log::info("eval  step {:>6} | val loss {:.4f} | val ppl {:.3f}{}", step, r.loss, r.perplexity,
            final_eval ? " (final)" : "");
  metrics.write({{"kind", "eval"}, {"step", step}, {"val_loss", r.loss}, {"val_ppl", r.perplexity}, {"val_tokens", r.tokens}});
}

void log_geometry(LanguageModel& model, int64_t step, int64_t pairs, MetricsLog& metrics) {
  at::NoGradGuard no_grad;
  EpsilonOptions o;
  o.method = EpsilonMethod::sampled;
  o.sample_pairs = pairs;
  o.seed = static_cast<uint64_t>(step);
  nlohmann::json record = {{"kind", "capacity"},
                           {"step", step},
                           {"method", "sampled"},
                           {"pairs", pairs},
                           {"tied", model.embedding().tied_table().defined()}};  // the head reuses the table
  std::string line;
  const std::pair<const char*, at::Tensor> matrices[] = {{"input", model.embedding().materialize()},
                                                         {"head", model.head_weight()}};
  for (const auto& [name, matrix] : matrices) {
    const auto e = estimate_epsilon(unit_rows(matrix.detach().to(at::kCPU, at::kFloat), name), o);
    record[std::string(name) + "_epsilon"] = e.epsilon();  // docs/capacity.md: eps = mu + 2 sigma
    record[std::string(name) + "_mu"] = e.mu;
    record[std::string(name) + "_sigma"] = e.sigma;
    record[std::string(name) + "_epsilon_ci"] = {e.ci_low, e.ci_high};
    line += fmt::format(" | {} eps {:.4f} (mu {:.4f}, sigma {:.4f})", name, e.epsilon(), e.mu, e.sigma);
  }
  log::info("geometry step {:>6}{} | sampled, {} pairs", step, line, pairs);
  metrics.write(record);
}

}  // namespace ember
