// ctest gpu.fused_projections (label gpu): the stacked projections (kernels/projections.h),
// on by default for CUDA inputs, against one linear per weight in a gated-attention model on the
// GPU: logits and every parameter's gradient, fp32 to round-off and under bf16 autocast within its
// rounding; and the default (automatic) mode takes the stacked path there, bit for bit.
// Exit 0 = match, 1 = mismatch, 77 (ctest's skip code) = no CUDA device.
#include <torch/torch.h>

#include <iostream>
#include <map>

#include "ember/model/autocast.h"
#include "kernels/projections.h"
#include "ember/model/lm.h"
#include "ember/kernels/kernel_choice.h"
#include "tests/gpu/gpu_precondition.h"

namespace {

struct Result {
  at::Tensor logits;
  std::map<std::string, at::Tensor> grads;
};

Result run(ember::LanguageModel& m, const at::Tensor& ids, bool bf16, ember::kernels::Path path) {
  const ember::kernels::ScopedPath scope(ember::kernels::Op::projections, path);
  m.zero_grad();
  at::Tensor loss, logits;
  {
    ember::AutocastScope amp(ids.device(), bf16);
    loss = m.loss(ids, ids.roll(1, 1));
    torch::NoGradGuard no_grad;
    logits = m.forward(ids).to(at::kFloat);
  }
  loss.backward();
  Result r{logits, {}};
  for (const auto& p : m.named_parameters()) r.grads[p.key()] = p.value().grad().clone();
  return r;
}

double worst(const Result& a, const Result& b) {  // largest difference relative to the tensor's scale
  auto rel = [](const at::Tensor& x, const at::Tensor& y) {
    return (x - y).abs().max().item<double>() / (y.abs().max().item<double>() + 1e-12);
  };
  double w = rel(a.logits, b.logits);
  for (const auto& [name, g] : b.grads) w = std::max(w, rel(a.grads.at(name), g));
  return w;
}

}  // namespace

int main() {
  if (int code = gpu_precondition("gpu.fused_projections")) return code;
  ember::ModelConfig c;
  c.vocab_size = 512, c.d_model = 256, c.n_layers = 2, c.n_heads = 8, c.n_kv_heads = 4, c.max_seq_len = 256;
  c.mlp.d_ff = 688;
  c.mixer.kind = "gated_attention";
  torch::manual_seed(1);
  ember::LanguageModel m(c);
  m.to(at::kCUDA);
  auto ids = torch::randint(0, 512, {4, 128}, torch::kLong).cuda();
  bool ok = true;
  for (const bool bf16 : {false, true}) {
    const auto fused = run(m, ids, bf16, ember::kernels::Path::fused);
    const auto separate = run(m, ids, bf16, ember::kernels::Path::aten);
    const auto automatic = run(m, ids, bf16, ember::kernels::Path::automatic);
    const double diff = worst(fused, separate), tol = bf16 ? 3e-2 : 1e-4;
    const bool same_path = worst(automatic, fused) == 0.0;
    std::cout << (bf16 ? "bf16" : "fp32") << ": stacked vs one linear per weight, worst relative difference " << diff
              << " (tolerance " << tol << "); the default path is the stacked one: " << (same_path ? "yes" : "NO")
              << "\n";
    ok = ok && diff < tol && same_path;
  }
  std::cout << (ok ? "OK" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
