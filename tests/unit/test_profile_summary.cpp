// The profile summary's arithmetic on hand-made events (self times, scopes, idle, host syncs,
// device kernels linked to their launching op), the --profile argument, and the device-side step
// outcomes that keep a training step free of host synchronisations.
#include <gtest/gtest.h>
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "ember/train/adamw.h"
#include "ember/train/profile_summary.h"
#include "ember/train/step_outcomes.h"
#include "ember/train/step_profiler.h"
#include "ember/util/error.h"

namespace profile_summary {
namespace {

using ember::ProfiledEvent;

ProfiledEvent cpu(const std::string& name, uint64_t start_us, uint64_t end_us, uint64_t thread = 1,
                  uint64_t correlation = 0) {
  return {name, start_us * 1000, end_us * 1000, thread, false, correlation};
}

ProfiledEvent kernel(const std::string& name, uint64_t start_us, uint64_t end_us, uint64_t launched_by) {
  return {name, start_us * 1000, end_us * 1000, 0, true, launched_by};
}

TEST(ProfileSummary, SelfTimesByCategoryOnTheCpu) {
  // linear [0, 100] -> mm [10, 70]; add [100, 130]; loss scope [150, 250] -> mm [160, 200] + exp [200, 240];
  // optimizer scope [260, 300] -> _fused_adamw_ [265, 295]; nothing in [130, 150] and [250, 260]: idle.
  const std::vector<ProfiledEvent> events{
      cpu("aten::linear", 0, 100),          cpu("aten::mm", 10, 70),
      cpu("aten::add_", 100, 130),          cpu(ember::kLossHeadScope, 150, 250),
      cpu("aten::mm", 160, 200),            cpu("aten::exp_", 200, 240),
      cpu(ember::kOptimizerScope, 260, 300), cpu("aten::_fused_adamw_", 265, 295),
      cpu("aten::item", 270, 272),          cpu("aten::_local_scalar_dense", 270, 271),  // the kernel's own read
      cpu("aten::item", 296, 299),          cpu("aten::_local_scalar_dense", 297, 299)};
  const auto s = ember::summarize_profile(events, 2);
  EXPECT_FALSE(s.device);
  EXPECT_NEAR(s.window_s, 300e-6, 1e-12);
  EXPECT_NEAR(s.seconds.at("matmul"), 60e-6, 1e-12);                   // the loss head's mm is not here
  EXPECT_NEAR(s.seconds.at("element-wise/norm"), (40 + 30) * 1e-6, 1e-12);  // linear's self time + add_
  EXPECT_NEAR(s.seconds.at("loss head"), 100e-6, 1e-12);               // the scope and both ops inside it
  EXPECT_NEAR(s.seconds.at("optimizer"), 40e-6, 1e-12);
  EXPECT_NEAR(s.seconds.at("idle"), 30e-6, 1e-12);
  EXPECT_EQ(s.seconds.at("communication"), 0.0);
  EXPECT_DOUBLE_EQ(s.host_syncs_per_step, 0.5);  // the read outside _fused_adamw_ only
  // innermost ATen ops: mm, add_, mm, exp_, the two _local_scalar_dense (linear, _fused_adamw_ and
  // the items have children)
  EXPECT_DOUBLE_EQ(s.ops_per_step, 3.0);
  ASSERT_FALSE(s.top_ops.empty());
  EXPECT_EQ(s.top_ops.front().first, "aten::mm");  // 60 + 40 us of self time
  const auto json = s.to_json();
  EXPECT_NEAR(json["seconds_per_step"]["loss head"].get<double>(), 50e-6, 1e-12);
  EXPECT_EQ(json["time_of"], "cpu");
}

TEST(ProfileSummary, OpsCountWhatComputesNotViewsOrAllocations) {
  // ember's fused op allocates its output (aten::empty inside it): it counts, the empty does not;
  // a reshape that only views, a transpose and a to() with nothing to convert do not count; a
  // contiguous() that copies counts once, as its copy.
  const std::vector<ProfiledEvent> events{
      cpu("ember::swiglu_gate", 0, 10),  cpu("aten::empty", 1, 2),
      cpu("aten::reshape", 10, 12),      cpu("aten::view", 10, 11),
      cpu("aten::transpose", 12, 13),    cpu("aten::as_strided", 12, 13),
      cpu("aten::to", 13, 14),           cpu("aten::contiguous", 14, 20),
      cpu("aten::clone", 14, 20),        cpu("aten::empty_like", 14, 15),
      cpu("aten::copy_", 15, 20),        cpu("aten::mul", 20, 25)};
  EXPECT_DOUBLE_EQ(ember::summarize_profile(events, 1).ops_per_step, 3.0);  // swiglu_gate, copy_, mul
}

TEST(ProfileSummary, ThreadsNestSeparately) {
  // Overlapping ops on two threads are not parent and child.
  const std::vector<ProfiledEvent> events{cpu("aten::mm", 0, 100, 1), cpu("aten::mul", 10, 20, 2)};
  const auto s = ember::summarize_profile(events, 1);
  EXPECT_NEAR(s.seconds.at("matmul"), 100e-6, 1e-12);
  EXPECT_NEAR(s.seconds.at("element-wise/norm"), 10e-6, 1e-12);
  EXPECT_EQ(s.seconds.at("idle"), 0.0);
}

TEST(ProfileSummary, DeviceKernelsTakeTheScopeOfTheirLaunch) {
  // The loss head's GEMM counts as loss head; a GEMM launched outside it as matmul; a gap between
  // kernels is idle device time; the host's stream synchronisation is counted.
  const std::vector<ProfiledEvent> events{
      cpu(ember::kLossHeadScope, 0, 50),     cpu("aten::mm", 5, 20, 1, 7),
      cpu("aten::mm", 60, 70, 1, 8),         cpu("cudaStreamSynchronize", 70, 90),
      kernel("sm90_xmma_gemm_bf16", 10, 40, 7), kernel("ampere_bf16_s16816gemm", 60, 80, 8),
      kernel("vectorized_elementwise_kernel", 85, 100, 0)};
  const auto s = ember::summarize_profile(events, 1);
  EXPECT_TRUE(s.device);
  EXPECT_NEAR(s.seconds.at("loss head"), 30e-6, 1e-12);
  EXPECT_NEAR(s.seconds.at("matmul"), 20e-6, 1e-12);
  EXPECT_NEAR(s.seconds.at("element-wise/norm"), 15e-6, 1e-12);
  EXPECT_NEAR(s.seconds.at("idle"), (10 + 20 + 5) * 1e-6, 1e-12);  // [0, 10], [40, 60] and [80, 85]
  EXPECT_DOUBLE_EQ(s.host_syncs_per_step, 1.0);
  EXPECT_DOUBLE_EQ(s.ops_per_step, 3.0);
}

TEST(ProfileSummary, CategoriesByName) {
  EXPECT_EQ(ember::categorize_op("aten::bmm", false), "matmul");
  EXPECT_EQ(ember::categorize_op("aten::addmm_", false), "matmul");  // in place: still a GEMM
  EXPECT_EQ(ember::categorize_op("aten::add_", false), "element-wise/norm");
  EXPECT_EQ(ember::categorize_op("aten::_scaled_dot_product_flash_attention", false), "attention");
  EXPECT_EQ(ember::categorize_op("flash_fwd_kernel", true), "attention");
  EXPECT_EQ(ember::categorize_op("c10d::allreduce_", false), "communication");
  EXPECT_EQ(ember::categorize_op("ncclDevKernel_AllReduce_Sum_f32_RING_LL", true), "communication");
  EXPECT_EQ(ember::categorize_op("aten::_fused_adamw_", false), "optimizer");
  EXPECT_EQ(ember::categorize_op("aten::rms_norm", false), "element-wise/norm");
  EXPECT_EQ(ember::categorize_op("autograd::engine::evaluate_function: MmBackward0", false), "framework");
  EXPECT_TRUE(ember::is_host_sync("aten::_local_scalar_dense"));
  EXPECT_FALSE(ember::is_host_sync("aten::item"));  // its _local_scalar_dense child is the one counted
}

TEST(ProfileSummary, NoEventsIsAllZero) {
  const auto s = ember::summarize_profile({}, 3);
  EXPECT_EQ(s.window_s, 0.0);
  EXPECT_EQ(s.seconds.size(), ember::profile_categories().size());
  EXPECT_NE(s.table().find("idle"), std::string::npos);
}

TEST(ProfileSteps, Parse) {
  const auto range = ember::parse_profile_steps("20:23");
  EXPECT_EQ(range.first, 20);
  EXPECT_EQ(range.last, 23);
  EXPECT_EQ(range.count(), 4);
  EXPECT_EQ(ember::parse_profile_steps("7").count(), 1);
  EXPECT_FALSE(ember::ProfileSteps{}.enabled());
  for (const char* bad : {"", "0:3", "5:2", "a:b", "3:", "2:3:4", "-1", "3x"})
    EXPECT_THROW(ember::parse_profile_steps(bad), ember::UsageError) << bad;
}

// The whole path through Kineto: a read of a tensor's value in the profiled steps is counted, ops
// land in their scope's category, and the trace and summary are written.
TEST(StepProfiler, CountsReadsOfTensorValuesThroughKineto) {
  const auto dir = std::filesystem::temp_directory_path() / "ember_step_profiler_test";
  for (bool read : {false, true}) {
    std::filesystem::remove_all(dir);
    {
      ember::StepProfiler profiler({2, 3}, dir, at::kCPU);
      auto w = torch::randn({64, 64});
      for (int64_t step = 1; step <= 4; ++step) {
        profiler.before_step(step);
        auto y = torch::mm(w, w).relu_();
        {
          RECORD_USER_SCOPE(ember::kOptimizerScope);
          w.mul_(0.5);
        }
        if (read) (void)y.sum().item<double>();
        profiler.after_step(step);
      }
      EXPECT_TRUE(profiler.finished());
    }
    ASSERT_TRUE(std::filesystem::exists(dir / "trace.json"));
    std::ifstream in(dir / "summary.json");
    const auto s = nlohmann::json::parse(in);
    EXPECT_EQ(s["steps"], 2);
    EXPECT_DOUBLE_EQ(s["host_syncs_per_step"].get<double>(), read ? 1.0 : 0.0);
    EXPECT_GT(s["seconds_per_step"]["matmul"].get<double>(), 0.0);
    EXPECT_GT(s["seconds_per_step"]["optimizer"].get<double>(), 0.0);
  }
  std::filesystem::remove_all(dir);
}

TEST(StepOutcomes, ReadInOneCopyInStepOrder) {
  ember::PendingOutcomes pending;
  const auto loss = torch::tensor(2.5, torch::kDouble), norm = torch::tensor(0.75, torch::kDouble);
  pending.add(1, loss, norm, ember::nonfinite_flag(loss, norm));
  const auto nan = torch::tensor(NAN, torch::kFloat);
  pending.add(2, nan, norm, ember::nonfinite_flag(nan, norm));
  pending.add(3, loss, torch::tensor(INFINITY, torch::kDouble),
              ember::nonfinite_flag(loss, torch::tensor(INFINITY, torch::kDouble)));
  const auto out = pending.take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(pending.empty());
  EXPECT_EQ(out[0].step, 1);
  EXPECT_DOUBLE_EQ(out[0].loss, 2.5);
  EXPECT_DOUBLE_EQ(out[0].grad_norm, 0.75);
  EXPECT_TRUE(out[0].finite);
  EXPECT_FALSE(out[1].finite);
  EXPECT_TRUE(std::isnan(out[1].loss));
  EXPECT_FALSE(out[2].finite);
  EXPECT_TRUE(pending.take().empty());
}

// The device-side clip and skip give the parameters the host-side path gave, bit for bit.
TEST(StepOutcomes, DeviceClipAndSkipMatchTheHostPath) {
  ember::OptimConfig cfg;
  cfg.weight_decay = 0.1;
  auto make = [] { return torch::tensor({{1.0f, -2.0f}, {0.5f, 3.0f}}).requires_grad_(); };
  auto a = make(), b = make();
  ember::AdamW host({{"layers.0.w", a}}, cfg), device({{"layers.0.w", b}}, cfg);
  const auto grad = torch::tensor({{30.0f, -10.0f}, {20.0f, 0.5f}});
  for (double max_norm : {1.0, 100.0, 0.0}) {
    a.mutable_grad() = grad.clone(), b.mutable_grad() = grad.clone();
    const double norm = ember::global_grad_norm({a});
    host.step(1e-2, ember::clip_coefficient(norm, max_norm));
    const auto norm_t = ember::global_grad_norm_tensor({b});
    device.step(1e-2, ember::clip_divisor(norm_t, max_norm), ember::nonfinite_flag(norm_t, norm_t));
    EXPECT_TRUE(torch::equal(a.detach(), b.detach())) << "max_norm " << max_norm;
  }
  // A non-finite gradient: the step is skipped on the device, nothing moves, it is not counted.
  const auto before = b.detach().clone();
  std::map<std::string, at::Tensor> state_before;  // copies: state_tensors() hands out the live tensors
  for (const auto& [key, t] : device.state_tensors()) state_before[key] = t.clone();
  b.mutable_grad() = torch::full({2, 2}, NAN);
  const auto norm_t = ember::global_grad_norm_tensor({b});
  device.step(1e-2, ember::clip_divisor(norm_t, 1.0), ember::nonfinite_flag(norm_t, norm_t));
  EXPECT_TRUE(torch::equal(b.detach(), before));
  for (const auto& [key, t] : device.state_tensors()) EXPECT_TRUE(torch::equal(t, state_before.at(key))) << key;
  EXPECT_EQ(device.steps(), 3);
  EXPECT_EQ(host.steps(), 3);
}

TEST(StepOutcomes, ClipDivisorIsTheInverseCoefficient) {
  for (double norm : {0.5, 1.0, 5.0, 1e6})
    for (double max_norm : {0.0, 1.0, 2.0})
      EXPECT_FLOAT_EQ(ember::clip_divisor(torch::tensor(norm, torch::kDouble), max_norm).item<float>(),
                      static_cast<float>(1.0 / ember::clip_coefficient(norm, max_norm)))
          << norm << " " << max_norm;
  EXPECT_EQ(ember::clip_divisor(torch::tensor(NAN, torch::kDouble), 1.0).item<float>(), 1.0f);
}

}  // namespace
}  // namespace profile_summary
