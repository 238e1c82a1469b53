// The number of ops one block launches, forward and backward, counted by the profiler on a CPU
// (the innermost ops that compute, ATen's and ember's own, views and allocations left out:
// train/profile_summary.h; on a GPU each is a kernel or more). A fusion lowers the count; a change
// that adds ops to every block fails here until its limit is raised on purpose (and lowered when a
// fusion lands). The limits are the counts measured on 2026-12-06 (torch 2.15) with the projections
// that read one input stacked (kernels/projections.h), the SwiGLU gate fused
// (kernels/swiglu.h; before it: attention 69 fp32 / 98 bf16, gated_attention 75, titans 1633,
// hope_attention 162), RoPE keeping the heads' layout (model/rope.h; attention bf16 94 before:
// the transpose copies of q's and k's gradients) and the norms fused with the residual add before
// them (model/norm.h; before it: 65 / 91, 71, 1629, 146, with the CPU norm's own pass not counted);
// another torch may dispatch differently and need them measured.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include "ember/model/autocast.h"
#include "kernels/projections.h"
#include "ember/model/norm.h"
#include "ember/model/lm.h"
#include "ember/train/step_profiler.h"

namespace kernel_budget {
namespace {

double block_ops(const std::string& mixer, bool bf16) {
  ember::ModelConfig c;
  c.vocab_size = 64, c.d_model = 64, c.n_layers = 1, c.n_heads = 4, c.max_seq_len = 32, c.mlp.d_ff = 128;
  c.mixer.kind = mixer;
  torch::manual_seed(1);
  ember::LanguageModel m(c);
  auto& block = m.blocks().front();
  // One folder per process: ctest runs this file's tests side by side, each with the same mixers.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ember_kernel_budget_" + mixer + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto x = torch::randn({2, 32, 64}).requires_grad_();
  auto step = [&] {
    at::Tensor y;
    {
      ember::AutocastScope amp(at::kCPU, bf16);
      y = block->forward(x, m.rope());
    }
    y.to(at::kFloat).sum().backward();
  };
  step();  // warm-up: the profile counts steady-state ops only
  {
    ember::StepProfiler profiler({1, 1}, dir, at::kCPU);
    profiler.before_step(1);
    step();
    profiler.after_step(1);
  }
  std::ifstream in(dir / "summary.json");
  const double ops = nlohmann::json::parse(in)["ops_per_step"].get<double>();
  std::filesystem::remove_all(dir);
  return ops;
}

using ember::kernels::Op;
using ember::testing::ScopedFusion;

// The ops of an attention block with an op fused and on ATen, the projections stacked as on a GPU.
std::pair<double, double> attention_ops_on_and_off(Op op, bool bf16) {
  const ScopedFusion stacked(Op::projections, true);
  auto ops = [&](bool fused) {
    const ScopedFusion path(op, fused);
    return block_ops("attention", bf16);
  };
  return {ops(true), ops(false)};
}

struct Budget {
  const char* mixer;
  bool bf16;
  double limit;
};

TEST(KernelBudget, OpsPerBlockForwardAndBackward) {
  // The counts of the path a GPU takes: the projections stacked (on the CPU only when asked).
  const ScopedFusion stacked(Op::projections, true), gate(Op::swiglu, true);
  // d 64, 4 heads, d_ff 128, 2 x 32 tokens; the counts do not depend on the thread count.
  for (const auto& b : {Budget{"attention", false, 62}, Budget{"attention", true, 84},
                        Budget{"gated_attention", false, 68}, Budget{"titans", false, 1602},
                        Budget{"hope_attention", false, 134}}) {
    const double ops = block_ops(b.mixer, b.bf16);
    std::cout << b.mixer << (b.bf16 ? " bf16" : " fp32") << ": " << ops << " ops per block, forward + backward\n";
    EXPECT_LE(ops, b.limit) << b.mixer << (b.bf16 ? " bf16" : " fp32");
  }
}

// kernels.swiglu reaches the block: the fused gate is one op forward and one backward where ATen
// takes silu and mul, their backward and the copy gathering the stacked projection's gradient.
TEST(KernelBudget, TheFusedSwiGLUGateSavesFourOpsPerBlock) {
  for (const bool bf16 : {false, true}) {
    const auto [fused, aten] = attention_ops_on_and_off(Op::swiglu, bf16);
    std::cout << (bf16 ? "bf16" : "fp32") << ": " << fused << " ops with the fused gate, " << aten << " with ATen's\n";
    EXPECT_EQ(fused, aten - 4) << (bf16 ? "bf16" : "fp32");
  }
}

// kernels.norm reaches the block: ATen's rms_norm is several ops each way and the residual add
// one more, where the fused pass is one op forward and one backward.
TEST(KernelBudget, TheFusedNormsLaunchFewerOpsThanAtens) {
  for (const bool bf16 : {false, true}) {
    const auto [fused, aten] = attention_ops_on_and_off(Op::norm, bf16);
    std::cout << (bf16 ? "bf16" : "fp32") << ": " << fused << " ops with the fused norms, " << aten << " with ATen's\n";
    EXPECT_LT(fused, aten - 20) << (bf16 ? "bf16" : "fp32");
  }
}

// The switch reaches the block: without the fused projections (kernels.projections = aten) the same
// block launches more ops, so an A/B run compares two paths.
TEST(KernelBudget, FusedProjectionsLaunchFewerOpsThanOneLinearPerWeight) {
  for (const bool bf16 : {false, true}) {
    auto ops = [&](bool stacked) {
      const ScopedFusion path(Op::projections, stacked);
      return block_ops("gated_attention", bf16);
    };
    const double fused = ops(true), separate = ops(false);
    std::cout << (bf16 ? "bf16" : "fp32") << ": " << fused << " ops fused, " << separate << " one linear per weight\n";
    EXPECT_LT(fused, separate - 20) << (bf16 ? "bf16" : "fp32");
  }
}

}  // namespace
}  // namespace kernel_budget
