// The language-model loss head alone, forward + backward of mean CE(h W^T, y) for N rows, width D
// and vocabulary V: ember's chunked linear cross-entropy (fused pass; `aten` last for its ATen
// pass) against the materialised form (logits [N, V], then cross_entropy, as LibTorch and
// Python compute it by default), and `matmuls`: the head's three GEMMs alone (logits, input
// gradient, weight gradient), the floor under any loss head. Prints one JSON line with seconds per
// iteration and the process's peak resident memory above the baseline after set-up; run each
// variant in its own process (bench/run_loss.sh does, ABAB). One iteration after the warm-up runs
// under the profiler, for outside_matmul_s: its time minus its GEMMs' (EMBER_BENCH_PROFILE=DIR keeps
// that profile's trace.json and summary.json in DIR).
// Usage: ember_loss_bench chunked|materialised|matmuls N D V [iters] [fp32|bf16] [fused|aten]
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <iostream>
#include <string>

#include "ember/model/autocast.h"
#include "ember/model/linear_cross_entropy.h"
#include "ember/train/step_profiler.h"
#include "ember/kernels/kernel_choice.h"
#include "peak_memory.h"

using ember::bench::reset_peak;
using ember::bench::status_kb;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: ember_loss_bench chunked|materialised|matmuls N D V [iters] [fp32|bf16] [fused|aten]\n";
    return 2;
  }
  const std::string impl = argv[1];
  const int64_t N = std::stoll(argv[2]), D = std::stoll(argv[3]), V = std::stoll(argv[4]);
  const int64_t iters = argc > 5 ? std::stoll(argv[5]) : 3;
  const bool bf16 = argc > 6 && std::string(argv[6]) == "bf16";
  const bool fused = !(argc > 7 && std::string(argv[7]) == "aten");
  const ember::kernels::ScopedPath path(ember::kernels::Op::loss_head, fused ? ember::kernels::Path::fused
                                                                             : ember::kernels::Path::aten);
  if (impl != "chunked" && impl != "materialised" && impl != "matmuls") {
    std::cerr << "ember_loss_bench: IMPL is chunked, materialised or matmuls, not '" << impl << "'\n";
    return 2;
  }
  torch::manual_seed(0);
  auto h = torch::randn({N, D}).requires_grad_(), w = (0.02 * torch::randn({V, D})).requires_grad_();
  auto y = torch::randint(0, V, {N}, torch::kLong);
  const auto mm_dtype = bf16 ? at::kBFloat16 : at::kFloat;
  const auto hm = h.detach().to(mm_dtype), wm = w.detach().to(mm_dtype);
  auto matmuls = [&] {  // z = h W^T, dh = z W, dW = z^T h: the head's GEMMs in its matmul dtype
    const auto z = at::mm(hm, wm.t());
    const auto dh = at::mm(z, wm), dw = at::mm(z.t(), hm);
    return dh.sum().item<double>() + dw.sum().item<double>() * 0.0;
  };
  auto step = [&] {
    if (impl == "matmuls") return matmuls();
    ember::AutocastScope amp(at::kCPU, bf16);
    // chunked: as `ember train` calls it, backward starting at the loss (LossGradient::root)
    auto loss = impl == "chunked" ? ember::linear_cross_entropy(h, w, y, 1.0, 0, {1.0, true})
                                  : at::cross_entropy_loss(at::linear(h, w).to(at::kFloat), y);
    loss.backward();
    h.mutable_grad() = at::Tensor();
    w.mutable_grad() = at::Tensor();
    return loss.item<double>();
  };
  step();  // warm-up
  // One more iteration under the profiler: its time outside the GEMMs (ATen's mm) measured within the
  // iteration, which the GEMMs' own run-to-run spread does not blur as a difference of totals would.
  const char* keep = std::getenv("EMBER_BENCH_PROFILE");
  const auto dir = keep ? std::filesystem::path(keep)
                        : std::filesystem::temp_directory_path() / ("ember_loss_bench_" + std::to_string(getpid()));
  {
    ember::StepProfiler profiler({1, 1}, dir, at::kCPU);
    profiler.before_step(1);
    step();
    profiler.after_step(1);
  }
  std::ifstream summary_file(dir / "summary.json");
  const auto summary = nlohmann::json::parse(summary_file);
  const double outside_mm =
      summary["window_seconds_per_step"].get<double>() - summary["seconds_per_step"]["matmul"].get<double>();
  if (!keep) std::filesystem::remove_all(dir);
  reset_peak();
  const long base = status_kb("VmRSS");
  double loss = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i) loss = step();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
  std::cout << "{\"impl\": \"" << impl << "\", \"N\": " << N << ", \"D\": " << D << ", \"V\": " << V
            << ", \"precision\": \"" << (bf16 ? "bf16" : "fp32") << "\", \"fused\": " << fused
            << ", \"loss\": " << loss
            << ", \"s_per_iter\": " << s << ", \"outside_matmul_s\": " << outside_mm << ", \"peak_extra_mb\": " << (status_kb("VmHWM") - base) / 1024.0 << "}\n";
  return 0;
}
