// train.debug_nonfinite: the trace names the first op whose output went non-finite and the model
// scopes it ran in, forward and backward; the report replays a step and saves its batches.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>

#include "ember/io/npy.h"
#include "ember/model/lm.h"
#include "ember/model/nonfinite_trace.h"
#include "ember/train/nonfinite_report.h"
#include "ember/util/files.h"
#include "scratch.h"

namespace {

ember::ModelConfig trace_model_config() {
  ember::ModelConfig c;
  c.vocab_size = 40, c.d_model = 16, c.n_layers = 3, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 32;
  return c;
}

at::Tensor trace_batch() {
  torch::manual_seed(5);
  return torch::randint(0, 40, {2, 9}, torch::kLong);
}

// Finite weights so large that layer 1's MLP overflows fp32 (SiLU(x W_gate) * x W_up ~ 1e62):
// the first inf is that MLP's product, made from finite inputs.
void break_layer_one(ember::LanguageModel& m) {
  torch::NoGradGuard ng;
  m.blocks()[1]->mlp().w_gate().fill_(1e30);
  m.blocks()[1]->mlp().w_up().fill_(1e30);
}

at::Tensor loss_of(ember::LanguageModel& m, const at::Tensor& batch) {
  const int64_t T = batch.size(1) - 1;
  return m.loss(batch.narrow(1, 0, T), batch.narrow(1, 1, T));
}

}  // namespace

TEST(NonfiniteTrace, AFiniteForwardAndBackwardFindNothing) {
  torch::manual_seed(1);
  ember::LanguageModel m(trace_model_config());
  ember::NonfiniteTrace trace;
  loss_of(m, trace_batch()).backward();
  EXPECT_FALSE(trace.first().has_value());
}

TEST(NonfiniteTrace, NamesTheLayerTheMlpAndTheOpWhoseFiniteInputsOverflowed) {
  torch::manual_seed(1);
  ember::LanguageModel m(trace_model_config());
  break_layer_one(m);
  ember::NonfiniteTrace trace;
  auto loss = loss_of(m, trace_batch());
  const auto f = trace.first();
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(std::isfinite(loss.item<double>()));
  ASSERT_GE(f->scopes.size(), 2u) << f->where();
  EXPECT_EQ(f->scopes[0], "layers.1") << f->where();
  EXPECT_EQ(f->scopes[1], "mlp") << f->where();
  EXPECT_EQ(f->op, "ember::swiglu_gate") << f->where();  // SiLU(gate) * up, fused (kernels/swiglu.h)
  EXPECT_FALSE(f->value.finite());
  ASSERT_FALSE(f->inputs.empty());
  for (const auto& in : f->inputs) EXPECT_TRUE(in.finite()) << f->where() << ": " << ember::describe(in);
  // Layer 0 ran before and stayed finite; nothing later is reported.
  EXPECT_EQ(f->where().find("layers.0"), std::string::npos);
  EXPECT_EQ(f->where().find("layers.2"), std::string::npos);
}

TEST(NonfiniteTrace, FindsABackwardOnlyNonfiniteInTheAutogradNodeThatMadeIt) {
  auto x = torch::zeros({3}, torch::kDouble).requires_grad_(true);
  auto y = (x.sqrt() * 2.0).sum();  // finite forward: sqrt(0) = 0; d sqrt / dx at 0 = inf
  ember::NonfiniteTrace trace;
  {
    ember::TraceScope scope("outer");  // a scope of the forward does not leak into the finding
  }
  y.backward();
  const auto f = trace.first();
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->where().find("SqrtBackward0"), std::string::npos) << f->where();
  EXPECT_EQ(f->where().find("outer"), std::string::npos) << f->where();
  EXPECT_EQ(f->value.inf, 3) << ember::describe(f->value);
}

TEST(NonfiniteTrace, SummaryCountsNanAndInfAndTheFiniteMaximum) {
  auto t = torch::tensor({1.0, -7.5, std::nan(""), double(INFINITY), -double(INFINITY)}).to(torch::kFloat);
  const auto s = ember::summarize(t);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.inf, 2);
  EXPECT_DOUBLE_EQ(s.max_abs, 7.5);
  EXPECT_EQ(ember::describe(s), "[5] Float: 1 NaN, 2 inf, finite max |x| 7.5");
  EXPECT_TRUE(ember::summarize(torch::arange(4)).finite());  // integers are never non-finite
}

TEST(NonfiniteTrace, OnlyOneTraceAtATime) {
  ember::NonfiniteTrace one;
  EXPECT_THROW(ember::NonfiniteTrace two, ember::Error);
}

TEST(NonfiniteReport, ReplaysTheStepWritesTheBatchAndTheFirstNonfiniteTensor) {
  const auto dir = ember::testing::scratch_dir("nonfinite_report", "forward");
  torch::manual_seed(1);
  ember::LanguageModel m(trace_model_config());
  break_layer_one(m);
  const auto batch = trace_batch();
  const auto line = ember::investigate_nonfinite(m, {batch}, {}, dir / "step_7");
  EXPECT_NE(line.find("forward of micro-batch 0: output 0 of layers.1 > mlp > ember::swiglu_gate went non-finite"),
            std::string::npos)
      << line;
  EXPECT_TRUE(torch::equal(ember::load_npy(dir / "step_7" / "batch_0.npy"), batch));
  const auto report = nlohmann::json::parse(ember::read_text_file(dir / "step_7" / "report.json"));
  EXPECT_EQ(report["first_nonfinite"]["pass"], "forward");
  EXPECT_EQ(report["first_nonfinite"]["scopes"][0], "layers.1");
  EXPECT_GT(report["first_nonfinite"]["value"]["inf"].get<int64_t>() +
                report["first_nonfinite"]["value"]["nan"].get<int64_t>(),
            0);
  for (const auto& p : m.parameters()) EXPECT_FALSE(p.grad().defined());  // the replay's gradients are cleared
}

TEST(NonfiniteReport, NamesParametersThatWereAlreadyNonfinite) {
  const auto dir = ember::testing::scratch_dir("nonfinite_report", "parameter");
  torch::manual_seed(1);
  ember::LanguageModel m(trace_model_config());
  {
    torch::NoGradGuard ng;
    m.blocks()[2]->mlp().w_down()[0][0] = std::nan("");
  }
  const auto line = ember::investigate_nonfinite(m, {trace_batch()}, {}, dir);
  EXPECT_NE(line.find("already non-finite before the step, first 'layers.2.mlp.w_down'"), std::string::npos) << line;
  const auto report = nlohmann::json::parse(ember::read_text_file(dir / "report.json"));
  EXPECT_EQ(report["nonfinite_parameters"], nlohmann::json::array({"layers.2.mlp.w_down"}));
}

TEST(Npy, SaveRoundTripsEveryDtypeAndRefusesOthers) {
  const auto dir = ember::testing::scratch_dir("npy_save");
  for (auto dtype : {torch::kFloat, torch::kDouble, torch::kHalf, torch::kLong, torch::kInt, torch::kByte}) {
    auto t = (torch::arange(24) % 7).to(dtype).view({2, 3, 4});
    ember::save_npy(dir / "t.npy", t);
    auto back = ember::load_npy(dir / "t.npy");
    EXPECT_EQ(back.scalar_type(), dtype);
    EXPECT_TRUE(torch::equal(back, t));
  }
  ember::save_npy(dir / "v.npy", torch::arange(5));  // a 1-d shape is written as (5,)
  EXPECT_NE(ember::read_text_file(dir / "v.npy").find("'shape': (5,)"), std::string::npos);
  EXPECT_EQ((ember::read_text_file(dir / "v.npy").size() - 5 * 8) % 64, 0u);  // data 64-byte aligned
  EXPECT_THROW(ember::save_npy(dir / "b.npy", torch::ones({2}, torch::kBool)), ember::DataError);
  EXPECT_FALSE(std::filesystem::exists(dir / "b.npy"));
}
