// The packing simulation: the spec's exponent and learning-rate rules, the optimiser beating the
// random baseline on a small grid, the sweep and its files.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "ember/analysis/capacity_fit.h"
#include "ember/analysis/epsilon.h"
#include "ember/analysis/packing_points.h"
#include "ember/analysis/packing_simulation.h"
#include "ember/util/error.h"
#include "scratch.h"

namespace fs = std::filesystem;
using namespace ember;

TEST(PackingSimulation, ExponentAndLearningRateRules) {
  EXPECT_EQ(packing_exponent(2000, 32), 11);    // floor(40 / ln 32) = 11
  EXPECT_EQ(packing_exponent(8000, 768), 9);    // floor(60 / ln 768) = 9
  EXPECT_EQ(packing_exponent(16000, 4096), 6);  // floor(50 / ln 4096) = 6
  EXPECT_EQ(packing_exponent(4000, 4096), 4);   // k <= 4000 wins: floor(40 / ln 4096)
  EXPECT_EQ(packing_exponent(5000, 2), 20);     // capped
  EXPECT_EQ(packing_learning_rate(1024), 0.005);
  EXPECT_EQ(packing_learning_rate(1025), 0.0025);
}

TEST(PackingSimulation, MaxAbsCosineIgnoresTheDiagonalAcrossBlocks) {
  auto x = torch::eye(6);
  x.index_put_({5}, torch::tensor({0.6f, 0.8f, 0.f, 0.f, 0.f, 0.f}));  // cos(row 0, row 5) = 0.6
  EXPECT_NEAR(max_abs_cosine(x, 2), 0.8, 1e-6);                        // rows 1 and 5
  EXPECT_NEAR(max_abs_cosine(torch::eye(5), 2), 0.0, 1e-7);
}

TEST(PackingSimulation, HandWrittenGradientEqualsAutograd) {
  torch::manual_seed(3);
  for (int p : {2, 7, 12}) {
    auto v = torch::randn({6, 15}, torch::kDouble).requires_grad_(true);
    auto u = v / v.norm(2, 0, true);
    auto off = u.t().mm(u) - torch::eye(15, torch::kDouble);
    off.abs().pow(p).sum().backward();
    double eps = 0.0;
    const auto mine = packing_gradient(v.detach(), p, &eps);
    EXPECT_TRUE(torch::allclose(mine, v.grad(), 1e-9, 1e-12)) << "p=" << p;
    EXPECT_NEAR(eps, off.detach().abs().max().item<double>(), 1e-12);
  }
}

TEST(PackingSimulation, OptimiserBeatsTheRandomBaseline) {
  // A small grid: the optimised max coherence is well below the best of the random draws.
  for (auto [k, d] : {std::pair<int64_t, int64_t>{120, 16}, {200, 32}}) {
    torch::manual_seed(0);
    const double random = random_packing_eps(k, d, 10, at::kCPU);
    torch::manual_seed(0);
    const double optimised = optimised_packing_eps(k, d, 200, at::kCPU);
    EXPECT_LT(optimised, 0.85 * random) << "k=" << k << " d=" << d;
    EXPECT_GT(optimised, 0.0);
  }
}

TEST(PackingSimulation, SweepWritesAndReadsBackItsPoints) {
  SweepOptions o;
  o.ks = {20, 40};
  o.ds = {8};
  o.draws = 3;
  o.steps = 20;
  o.progress = false;
  int calls = 0;
  const auto points = run_packing_sweep(
      o, [&](const std::vector<PackingPoint>& so_far) { EXPECT_EQ(so_far.size(), static_cast<size_t>(++calls)); });
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].kind, ember::PackingKind::random);
  EXPECT_EQ(points[3].kind, ember::PackingKind::optimised);
  EXPECT_EQ(points[3].exponent, packing_exponent(40, 8));
  const auto again = run_packing_sweep(o);
  EXPECT_EQ(again[3].eps, points[3].eps);  // seeded per point: reproducible
  const fs::path dir = ember::testing::scratch_dir("packing_points");
  for (const char* name : {"p.csv", "p.json"}) {
    write_points(dir / name, points);
    const auto back = read_points(dir / name);
    ASSERT_EQ(back.size(), points.size()) << name;
    for (size_t i = 0; i < back.size(); ++i) {
      EXPECT_EQ(back[i].kind, points[i].kind);
      EXPECT_EQ(back[i].k, points[i].k);
      EXPECT_NEAR(back[i].eps, points[i].eps, 1e-8);
    }
  }
  std::ofstream(dir / "ref.json") << "[[2000, 32, 0.3859], [8000, 768, 0.057]]";  // the reference's layout
  const auto ref = read_points(dir / "ref.json");
  EXPECT_EQ(ref[1].d, 768);
  EXPECT_EQ(ref[0].kind, ember::PackingKind::unlabelled);
  std::ofstream(dir / "bad.csv") << "k,d,eps\n10,4,0.3\n10,four,0.2\n";
  try {
    read_points(dir / "bad.csv");
    FAIL() << "bad CSV accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_points(dir / "p.txt", points), UsageError);
  std::ofstream(dir / "kind.csv") << "kind,k,d,eps\nrandom,10,4,0.3\nannealed,10,4,0.2\n";
  try {
    read_points(dir / "kind.csv");
    FAIL() << "an unknown packing kind accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("kind.csv:3: unknown packing kind 'annealed'"), std::string::npos) << e.what();
  }
}

// auto fits JL to the random points and the others to the optimised ones, all when a kind is absent.
TEST(PackingSimulation, FitPointsResolvesAutoByForm) {
  std::vector<PackingPoint> points(3);
  points[0].kind = PackingKind::random, points[1].kind = PackingKind::optimised, points[2].kind = PackingKind::optimised;
  auto [jl, jl_kind] = fit_points(points, FitPoints::automatic, CapacityForm::jl);
  EXPECT_EQ(jl.size(), 1u);
  EXPECT_EQ(jl_kind, FitPoints::random);
  auto [full, full_kind] = fit_points(points, FitPoints::automatic, CapacityForm::full);
  EXPECT_EQ(full.size(), 2u);
  EXPECT_EQ(full_kind, FitPoints::optimised);
  EXPECT_EQ(fit_points(points, FitPoints::all, CapacityForm::jl).first.size(), 3u);
  std::vector<PackingPoint> unlabelled(2);
  auto [fallback, fallback_kind] = fit_points(unlabelled, FitPoints::automatic, CapacityForm::single);
  EXPECT_EQ(fallback.size(), 2u);
  EXPECT_EQ(fallback_kind, FitPoints::all);
  EXPECT_TRUE(fit_points(unlabelled, FitPoints::random, CapacityForm::jl).first.empty());
}
