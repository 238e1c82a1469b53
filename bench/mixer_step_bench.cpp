// Training-step cost and activation memory of token mixers with the same body, side by side in one
// process (step_rounds.h: ABBA rounds, same batch). Each contender is the base config with one
// overlay (e.g. configs/mixers/titans.yaml); the first is the reference. Prints one JSON line: per
// contender the parameters, median seconds per step, tokens/s, the median over rounds of its step
// time relative to the first's, and the peak resident memory one step adds, per token. Denormals
// are flushed to zero on every thread, as in `ember train` on CPUs.
// Usage: ember_mixer_step_bench BASE.yaml B T ROUNDS NAME=OVERLAY.yaml [NAME=OVERLAY.yaml...]
#include <malloc.h>

#include <iostream>
#include <vector>

#include "ember/run/run_config.h"
#include "ember/util/denormals.h"
#include "ember/util/error.h"
#include "peak_memory.h"
#include "step_rounds.h"

namespace {

// Kilobytes of resident memory one more training step of `c` adds at its peak (free heap memory
// is returned to the system first, so the step's activations are not hidden in malloc's cache).
double step_peak_kb(ember::bench::Contender& c, const at::Tensor& x, const at::Tensor& y) {
  malloc_trim(0);
  ember::bench::reset_peak();
  const long before = ember::bench::status_kb("VmRSS");
  ember::bench::timed_step(c, x, y, false);
  return static_cast<double>(ember::bench::status_kb("VmHWM") - before);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::cerr << "usage: ember_mixer_step_bench BASE.yaml B T ROUNDS NAME=OVERLAY.yaml [NAME=OVERLAY.yaml...]\n";
    return 2;
  }
  ember::flush_denormals_on_all_threads();  // as ember train does on CPUs
  const std::string base = argv[1];
  const int64_t B = std::stoll(argv[2]), T = std::stoll(argv[3]), rounds = std::stoll(argv[4]);
  std::vector<ember::bench::Contender> all;
  ember::ModelConfig model;
  for (int i = 5; i < argc; ++i) {
    const std::string spec = argv[i];
    const auto eq = spec.find('=');
    if (eq == std::string::npos) {
      std::cerr << "ember_mixer_step_bench: expected NAME=OVERLAY.yaml, got '" << spec << "'\n";
      return 2;
    }
    try {
      model = ember::load_config({base, spec.substr(eq + 1)},
                                {"model.max_seq_len=" + std::to_string(T), "train.seq_len=" + std::to_string(T)})
                  .model;
    } catch (const ember::Error& e) {
      std::cerr << "ember_mixer_step_bench: " << e.what() << "\n";
      return 2;
    }
    torch::manual_seed(0);
    all.push_back(ember::bench::make_contender(spec.substr(0, eq), model));
  }
  auto batch = torch::randint(0, model.vocab_size, {B, T + 1}, torch::kLong);
  auto x = batch.narrow(1, 0, T), y = batch.narrow(1, 1, T);
  ember::bench::run_rounds(all, x, y, false, rounds);
  std::cout << "{\"base\": \"" << base << "\", \"batch\": " << B << ", \"seq_len\": " << T << ", \"rounds\": " << rounds
            << ", \"threads\": " << at::get_num_threads() << ", \"mixers\": [";
  for (size_t i = 0; i < all.size(); ++i) {
    const double s = ember::bench::median(all[i].seconds);
    std::cout << (i ? ", " : "") << "{\"name\": \"" << all[i].name << "\", \"params\": " << all[i].model->num_parameters()
              << ", \"median_s_per_step\": " << s << ", \"tokens_per_s\": " << static_cast<double>(B * T) / s
              << ", \"median_relative_to_first\": " << ember::bench::median(all[i].relative)
              << ", \"step_peak_kb_per_token\": " << step_peak_kb(all[i], x, y) / static_cast<double>(B * T) << "}";
  }
  std::cout << "]}\n";
  return 0;
}
