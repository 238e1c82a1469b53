// The `kernels:` section and `auto`: the config's keys, the on-device check of every fused op
// against its ATen path (here on the CPU, fp32 and bf16), a faulty kernel that the check refuses and
// a run that then trains on ATen's ops, and the cache of the check's table.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>

#include "ember/model/kernel_check.h"
#include "ember/model/kernel_table.h"
#include "ember/run/run_config.h"
#include "ember/train/kernel_setup.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/kernels/kernel_choice.h"
#include "model_gradients.h"
#include "scratch.h"

namespace kernel_choice {
namespace {

using ember::kernels::Op;
using ember::kernels::Path;

struct ScratchCache : ember::testing::ScratchCache {
  explicit ScratchCache(const std::string& name) : ember::testing::ScratchCache("kernel_cache", name) {}
};

// Injects a fault into one op's fused path for one scope.
struct Fault {
  Op op;
  Fault(Op o, double error) : op(o) { ember::kernels::testing::inject_fault(op, error); }
  ~Fault() { ember::kernels::testing::inject_fault(op, 0.0); }
};

std::string config_error(const std::vector<std::string>& sets) {
  try {
    ember::load_config({}, sets);
  } catch (const ember::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KernelsConfig, EveryOpIsAutoByDefaultAndTakesFusedOrAten) {
  const auto c = ember::load_config({}, {});
  for (Op op : ember::kernels::kAllOps) EXPECT_EQ(c.kernels.choices[op], Path::automatic) << ember::kernels::op_name(op);
  EXPECT_EQ(c.kernels.prefetch_batches, 2);
  const auto set = ember::load_config({}, {"kernels.norm=aten", "kernels.loss_head=fused", "kernels.prefetch_batches=0"});
  EXPECT_EQ(set.kernels.choices[Op::norm], Path::aten);
  EXPECT_EQ(set.kernels.choices[Op::loss_head], Path::fused);
  EXPECT_EQ(set.kernels.prefetch_batches, 0);
  const auto yaml = ember::to_yaml(set);
  EXPECT_NE(yaml.find("kernels:\n  loss_head: fused\n  norm: aten\n  swiglu: auto\n  rope: auto\n  projections: auto\n"
                      "  lev: auto\n  prefetch_batches: 0\n"),
            std::string::npos)
      << yaml;
  EXPECT_EQ(ember::parse_config_text(yaml, "round trip").kernels.choices, set.kernels.choices);
}

TEST(KernelsConfig, BadValuesAreRefusedByName) {
  EXPECT_NE(config_error({"kernels.norm=fast"}).find("kernels.norm"), std::string::npos);
  EXPECT_NE(config_error({"kernels.norm=fast"}).find("aten"), std::string::npos);
  EXPECT_NE(config_error({"kernels.swiglue=aten"}).find("kernels.swiglu"), std::string::npos);  // did you mean
  for (const char* bad : {"kernels.prefetch_batches=two", "kernels.prefetch_batches=-1", "kernels.prefetch_batches=5000"})
    EXPECT_NE(config_error({bad}).find("kernels.prefetch_batches"), std::string::npos) << bad;
}

TEST(KernelsConfig, TheKernelChoicesAreNotPartOfTheModelHash) {
  const auto a = ember::load_config({}, {}), b = ember::load_config({}, {"kernels.norm=aten", "kernels.lev=fused"});
  EXPECT_EQ(ember::model_hash(a.model), ember::model_hash(b.model));
  EXPECT_NE(ember::config_hash(a), ember::config_hash(b));
}

TEST(KernelChoice, AutoStacksProjectionsOnCudaOnlyAndTheRestEverywhere) {
  const auto was = ember::kernels::install({});
  EXPECT_TRUE(ember::kernels::use_fused(Op::norm, at::kCPU));
  EXPECT_FALSE(ember::kernels::use_fused(Op::projections, at::kCPU));
  EXPECT_TRUE(ember::kernels::use_fused(Op::projections, at::Device(at::kCUDA, 0)));
  {
    const ember::kernels::ScopedPath aten(Op::norm, Path::aten);
    EXPECT_FALSE(ember::kernels::use_fused(Op::norm, at::kCPU));
  }
  EXPECT_TRUE(ember::kernels::use_fused(Op::norm, at::kCPU));
  ember::kernels::install(was);
}

// Every fused op agrees with its ATen path on this CPU, in fp32 and under bf16 autocast; the check
// leaves the global random state as it found it.
TEST(KernelCheck, EveryFusedOpAgreesWithAtenOnTheCpu) {
  for (const bool bf16 : {false, true}) {
    torch::manual_seed(3);
    const auto before = torch::rand({4});
    torch::manual_seed(3);
    const auto rows = ember::check_kernels(at::kCPU, bf16);
    EXPECT_TRUE(torch::equal(torch::rand({4}), before)) << "the check drew from the global generator";
    ASSERT_EQ(rows.size(), ember::kernels::kAllOps.size());
    for (const auto& r : rows) {
      EXPECT_TRUE(r.agrees) << ember::kernels::op_name(r.op) << (bf16 ? " bf16: " : " fp32: ") << r.worst << " off by "
                            << r.error;
      EXPECT_LE(r.error, 1.0);
      EXPECT_GT(r.fused_ms, 0.0);
      EXPECT_GT(r.aten_ms, 0.0);
      EXPECT_EQ(r.choice == Path::fused, r.fused_ms <= r.aten_ms * ember::kFusedTimeAllowance);
    }
  }
}

// A fused kernel whose output is off by 5% in every element is refused, op by op in fp32, and the
// norm's under bf16 too (bf16 GEMMs are slow on CPUs without bf16 instructions). A refused kernel
// gives ATen whatever its timing, so one timed round does (the default five are the test above's).
TEST(KernelCheck, AFaultyKernelIsRefusedAndAutoTakesAten) {
  for (const bool bf16 : {false, true})
    for (Op op : ember::kernels::kAllOps) {
      if (bf16 && op != Op::norm) continue;
      const Fault fault(op, 0.05);
      for (const auto& r : ember::check_kernels(at::kCPU, bf16, 1)) {
        EXPECT_EQ(r.agrees, r.op != op) << ember::kernels::op_name(r.op) << " with the fault in "
                                        << ember::kernels::op_name(op) << (bf16 ? " bf16" : " fp32");
        if (r.op == op) EXPECT_EQ(r.choice, Path::aten);
      }
    }
}

TEST(KernelCheck, DisagreementIsCountedElementByElement) {
  const auto a = torch::tensor({1000.0, 1.0, 1e-3}, torch::kDouble);
  EXPECT_EQ(ember::disagreement(a, a, false), 0.0);
  // 0.5 off on an element of 1: within a tolerance of 1e-3 of the largest value (1), beyond fp32's
  // per element (1e-4 of the element + 1e-5 of the largest = 0.0101), within bf16's (2^-7 of 1000).
  auto f = a.clone();
  f[1] = 1.5;
  EXPECT_GT(ember::disagreement(f.to(torch::kFloat), a.to(torch::kFloat), false), 1.0);
  EXPECT_LE(ember::disagreement(f.to(torch::kFloat), a.to(torch::kFloat), true), 1.0);  // within bf16's
  EXPECT_TRUE(std::isinf(ember::disagreement(a.slice(0, 0, 2), a, false)));
  auto nan = a.clone();
  nan[2] = std::nan("");
  EXPECT_TRUE(std::isinf(ember::disagreement(nan, a, false)));
}

// The first check of a key is cached; later ones read it; a file that does not read back is
// checked again and rewritten; another precision or device is another key.
TEST(KernelTable, IsCachedPerKeyAndACorruptCacheIsRebuilt) {
  const ScratchCache cache("cached");
  const auto first = ember::kernel_table(at::kCPU, false);
  EXPECT_EQ(first.source, "checked now");
  const auto again = ember::kernel_table(at::kCPU, false);
  EXPECT_NE(again.source, "checked now");
  EXPECT_EQ(again.key, first.key);
  for (Op op : ember::kernels::kAllOps) EXPECT_EQ(again.row(op).choice, first.row(op).choice);
  EXPECT_NE(ember::kernel_table_key(at::kCPU, true), first.key);
  EXPECT_NE(first.key.find("torch "), std::string::npos);
  ember::write_file_atomic(again.source, "{\"key\": \"x\", \"rows\": [");
  const auto rebuilt = ember::kernel_table(at::kCPU, false);
  EXPECT_EQ(rebuilt.source, "checked now");
  EXPECT_EQ(ember::kernel_table(at::kCPU, false).source, again.source);  // rewritten, reads back
}

// auto takes the table's choice; fused and aten are taken as they are; a faulty kernel under auto
// gives ATen (with a warning), and a model trained then runs no fused op of that kind.
TEST(KernelTable, AutoTakesTheTablesChoiceAndAFaultyKernelGivesAten) {
  const ScratchCache cache("resolve");
  ember::kernels::Choices asked;
  asked[Op::swiglu] = Path::fused;
  asked[Op::rope] = Path::aten;
  const Fault fault(Op::norm, 0.05);
  const auto table = ember::kernel_table(at::kCPU, false);
  EXPECT_FALSE(table.all_agree());
  const auto c = ember::resolve_kernels(asked, &table);
  EXPECT_EQ(c[Op::norm], Path::aten);
  EXPECT_EQ(c[Op::swiglu], Path::fused);
  EXPECT_EQ(c[Op::rope], Path::aten);
  EXPECT_EQ(c[Op::loss_head], table.row(Op::loss_head).choice);
  EXPECT_THROW(ember::resolve_kernels(asked, nullptr), ember::Error);
}

// A model trained with the choices resolved under a faulty fused norm runs ATen's norms: its loss
// and gradients equal those with kernels.norm = aten exactly, and differ from the faulty kernel's.
TEST(KernelTable, WithAFaultyNormTheModelRunsOnAtensNorms) {
  const ScratchCache cache("faulty_model");
  const Fault fault(Op::norm, 0.05);
  const auto table = ember::kernel_table(at::kCPU, false);
  const auto was = ember::kernels::install(ember::resolve_kernels({}, &table));
  ASSERT_EQ(ember::kernels::path(Op::norm), Path::aten);
  const auto resolved = ember::testing::small_model_loss_and_gradients();
  std::vector<at::Tensor> aten, faulty;
  {
    const ember::kernels::ScopedPath norm(Op::norm, Path::aten);
    aten = ember::testing::small_model_loss_and_gradients();
  }
  {
    const ember::kernels::ScopedPath norm(Op::norm, Path::fused);
    faulty = ember::testing::small_model_loss_and_gradients();
  }
  ember::kernels::install(was);
  ASSERT_EQ(resolved.size(), aten.size());
  for (size_t i = 0; i < aten.size(); ++i) EXPECT_TRUE(torch::equal(resolved[i], aten[i])) << i;
  EXPECT_FALSE(torch::allclose(faulty[0], aten[0], 1e-6, 0.0));
}

TEST(KernelTable, ChoicesRoundTripThroughTheirRecordAndDifferencesAreNamed) {
  ember::kernels::Choices a, b;
  a[Op::norm] = Path::fused, b[Op::norm] = Path::aten;
  a[Op::lev] = b[Op::lev] = Path::fused;
  EXPECT_EQ(ember::choices_from_json(ember::choices_json(a)), a);
  EXPECT_FALSE(ember::choices_from_json(nlohmann::json{{"norm", "fast"}}).has_value());
  EXPECT_EQ(ember::changed_choices(a, b), std::vector<std::string>{"norm fused -> aten"});
  EXPECT_EQ(ember::describe_choices(b), "loss_head=auto norm=aten swiglu=auto rope=auto projections=auto lev=fused");
}

// A resumed run keeps what it trained with where the config says auto and the key is the same.
TEST(KernelSetup, AResumedRunKeepsItsChoicesForTheSameKey) {
  const ScratchCache cache("setup");
  const auto was = ember::kernels::installed();
  ember::KernelsConfig cfg;
  const auto fresh = ember::set_up_kernels(cfg, at::kCPU, false, nullptr, nullptr);
  EXPECT_EQ(ember::kernels::installed(), fresh.choices);
  auto record = fresh.record;
  const auto flipped = fresh.choices[Op::projections] == Path::fused ? "aten" : "fused";
  record["choices"]["projections"] = flipped;
  const auto resumed = ember::set_up_kernels(cfg, at::kCPU, false, nullptr, record);
  EXPECT_EQ(ember::enum_name(resumed.choices[Op::projections]), flipped);
  record["key"] = "another device";
  const auto moved = ember::set_up_kernels(cfg, at::kCPU, false, nullptr, record);
  EXPECT_EQ(moved.choices, fresh.choices);
  ember::kernels::install(was);
}

}  // namespace
}  // namespace kernel_choice
