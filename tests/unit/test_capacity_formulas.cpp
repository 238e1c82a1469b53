// The capacity formulas against the spec's anchors (the paper's table, within 1%), the class
// rule, the inverses, and the Levenberg-Marquardt fit recovering known constants.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/analysis/capacity_fit.h"
#include "ember/analysis/capacity_formulas.h"
#include "ember/analysis/levenberg_marquardt.h"
#include "ember/util/error.h"

using namespace ember;

namespace {
// The table's values have 3 significant digits (match within 1%); the spec's "~" values two.
void expect_within(double got, double want, double tolerance, const std::string& what) {
  EXPECT_NEAR(got / want, 1.0, tolerance) << what << ": got " << got << ", want " << want;
}
void expect_within_1pct(double got, double want, const std::string& what) { expect_within(got, want, 0.01, what); }
}  // namespace

TEST(CapacityFormulas, FullFormMatchesThePapersTable) {
  struct Anchor {
    const char* model;
    double d, eps, capacity, tolerance;
  };
  const Anchor anchors[] = {{"Llama 2 7B", 4096, 0.06450, 3.99e7, 0.01},  {"Llama 3 8B", 4096, 0.05945, 1.42e7, 0.01},
                            {"Phi 2", 2560, 0.05497, 4.57e5, 0.01},       {"Qwen 2.5 7B", 3584, 0.07501, 1.20e8, 0.01},
                            {"Gemma 3 27B", 5376, 0.07421, 4.36e9, 0.01}, {"eps 0.09 d 2048", 2048, 0.09, 2.0e7, 0.03},
                            {"eps 0.09 d 3072", 3072, 0.09, 6.0e8, 0.03}, {"d 8192 eps 0.05", 8192, 0.05, 2.4e8, 0.03},
                            {"d 8192 eps 0.09", 8192, 0.09, 2.0e14, 0.03}};
  for (const auto& a : anchors) {
    const auto b = full_form_capacity(a.d, a.eps);
    expect_within(b.value(), a.capacity, a.tolerance, a.model);
    EXPECT_EQ(capacity_class(a.eps), CapacityClass::near_orthogonal) << a.model;
  }
  EXPECT_EQ(capacity_class(0.20164), CapacityClass::class1);  // Gemma 3 1B: indeterminate (class 1)
}

TEST(CapacityFormulas, SingleConstantAndJlForLlama2) {
  expect_within(single_constant_capacity(4096, 0.0645).value(), 2.2e9, 0.03, "single-constant (~2.2e9)");
  expect_within_1pct(jl_capacity(4096, 0.0645).value(), 8.4, "JL C=8");
  expect_within_1pct(jl_capacity(4096, 0.0645, kJlRandomC).value(), 277, "JL C=3.029");
  const auto b = capacity_bounds(4096, 0.0645);
  EXPECT_EQ(b.full.value(), full_form_capacity(4096, 0.0645).value());
  EXPECT_EQ(b.jl_random.value(), jl_capacity(4096, 0.0645, kJlRandomC).value());
}

TEST(CapacityFormulas, FullFormIsAnIntegerCeilingAndHugeValuesStayInLogs) {
  const auto small = full_form_capacity(16, 0.05);
  // The exact integers of the reference's max_k (np.ceil of the same operations in float64),
  // at 4e9, 1e10 and 2e14, where a tolerance proportional to k would lose units.
  EXPECT_EQ(full_form_capacity(5376, 0.07421).value(), 4351177195.0);
  EXPECT_EQ(full_form_capacity(4096, 0.09).value(), 11635062127.0);
  EXPECT_EQ(full_form_capacity(8192, 0.09).value(), 202957499422786.0);
  EXPECT_EQ(small.value(), std::ceil(small.value()));
  const auto huge = full_form_capacity(1e6, 0.9);
  EXPECT_TRUE(std::isinf(huge.value()));
  EXPECT_GT(huge.log10(), 308);
  EXPECT_EQ(format_capacity(huge).rfind("10^", 0), 0u) << format_capacity(huge);
  EXPECT_EQ(format_capacity(full_form_capacity(4096, 0.0645)), "3.99e+07");
  EXPECT_EQ(format_capacity(jl_capacity(4096, 0.0645)), "8.42");
}

TEST(CapacityFormulas, ClassRuleBoundaries) {
  EXPECT_EQ(capacity_class(0.0999), CapacityClass::near_orthogonal);
  EXPECT_EQ(capacity_class(0.1), CapacityClass::indeterminate);
  EXPECT_EQ(capacity_class(0.2), CapacityClass::indeterminate);
  EXPECT_EQ(capacity_class(0.2001), CapacityClass::class1);
  EXPECT_EQ(capacity_class(0.0), CapacityClass::class1);       // orthonormal rows: no bound is defined
  EXPECT_EQ(capacity_class(-1.0 / 3), CapacityClass::class1);  // a regular simplex of 4
  EXPECT_EQ(class_label(CapacityClass::near_orthogonal), "2");
  EXPECT_EQ(class_label(CapacityClass::indeterminate), "indeterminate");
}

TEST(CapacityFormulas, InversesRoundTrip) {
  for (double d : {512.0, 4096.0})
    for (double eps : {0.05, 0.08}) {
      const double k = std::exp(full_form_capacity(d, eps).ln_k);  // before the ceiling
      EXPECT_NEAR(full_form_epsilon(k, d), eps, 1e-6 * eps) << d << " " << eps;
      const double ks = std::exp(single_constant_capacity(d, eps).ln_k);
      EXPECT_NEAR(single_constant_epsilon(ks, d), eps, 1e-9) << d;
      EXPECT_NEAR(jl_epsilon(std::exp(jl_capacity(d, eps).ln_k), d), eps, 1e-9) << d;
    }
  EXPECT_EQ(full_form_epsilon(100, 256), 0.0);  // k <= d: exactly orthogonal
}

TEST(CapacityFormulas, BadInputsAreUsageErrors) {
  EXPECT_THROW(full_form_capacity(0, 0.05), UsageError);
  EXPECT_THROW(full_form_capacity(4096, 0.0), UsageError);
  EXPECT_THROW(jl_capacity(4096, 1.5), UsageError);
}

TEST(LevenbergMarquardt, SolvesSmallSystemsAndFitsAnExponential) {
  std::vector<double> x;
  ASSERT_TRUE(solve_dense({2, 1, 1, 3}, {3, 5}, x));
  EXPECT_NEAR(x[0], 0.8, 1e-12);
  EXPECT_NEAR(x[1], 1.4, 1e-12);
  EXPECT_FALSE(solve_dense({1, 2, 2, 4}, {1, 2}, x));
  LeastSquaresProblem p;  // y = 2.5 exp(-0.7 t)
  p.residuals = [](const std::vector<double>& q, std::vector<double>& r) {
    r.resize(20);
    for (int i = 0; i < 20; ++i) r[i] = q[0] * std::exp(-q[1] * 0.25 * i) - 2.5 * std::exp(-0.7 * 0.25 * i);
  };
  const auto res = levenberg_marquardt(p, {1.0, 0.1});
  EXPECT_TRUE(res.converged);
  EXPECT_NEAR(res.x[0], 2.5, 1e-6);
  EXPECT_NEAR(res.x[1], 0.7, 1e-6);
  p.lower = {0.0, 0.0};
  p.upper = {2.0, 10.0};  // the bound binds: C stays at 2
  EXPECT_LE(levenberg_marquardt(p, {1.0, 0.1}).x[0], 2.0);
}

TEST(LevenbergMarquardt, DampingFallsAfterAcceptedStepsSoRosenbrockConvergesQuickly) {
  // Rosenbrock as least squares, r = (10 (y - x^2), 1 - x), from the classic start (-1.2, 1): the
  // minimum is (1, 1) with cost 0. With the damping divided by 10 after each accepted step LM
  // needs 26 iterations; damping that never decreases crawls along the valley (500 iterations
  // left it at (0.83, 0.69)).
  LeastSquaresProblem p;
  p.residuals = [](const std::vector<double>& q, std::vector<double>& r) { r = {10 * (q[1] - q[0] * q[0]), 1 - q[0]}; };
  const auto res = levenberg_marquardt(p, {-1.2, 1.0});
  EXPECT_TRUE(res.converged);
  EXPECT_LE(res.iterations, 40);
  EXPECT_NEAR(res.x[0], 1.0, 1e-8);
  EXPECT_NEAR(res.x[1], 1.0, 1e-8);
  EXPECT_LT(res.cost, 1e-20);
}

TEST(CapacityFit, RecoversTheFullFormConstantsFromItsOwnPoints) {
  const FullFormConstants truth;
  std::vector<PackingPoint> points;
  for (int64_t k = 2000; k <= 32000; k += 6000)
    for (int64_t d = 256; d <= 4096; d += 768) {
      PackingPoint p;
      p.kind = ember::PackingKind::optimised, p.k = k, p.d = d;
      p.eps = full_form_epsilon(double(k), double(d), truth);
      points.push_back(p);
    }
  const auto fit = fit_capacity_form(CapacityForm::full, points);
  const auto c = fit.full_constants();
  EXPECT_NEAR(c.C, truth.C, 1e-3 * truth.C);
  EXPECT_NEAR(c.a, truth.a, 1e-3 * truth.a);
  EXPECT_NEAR(c.b, truth.b, 1e-3 * truth.b);
  EXPECT_NEAR(c.c, truth.c, 1e-3 * truth.c);
  EXPECT_GT(fit.r2, 0.999999);
  EXPECT_LT(fit.mape, 0.01);
}

TEST(CapacityFit, SingleConstantAndJlRecoverTheirConstant) {
  std::vector<PackingPoint> single, jl;
  for (int64_t k : {2000, 8000, 20000})
    for (int64_t d : {64, 256, 1024}) {
      single.push_back({PackingKind::optimised, k, d, single_constant_epsilon(double(k), double(d), 1.293)});
      jl.push_back({PackingKind::random, k, d, jl_epsilon(double(k), double(d), 3.029)});
    }
  EXPECT_NEAR(fit_capacity_form(CapacityForm::single, single).params[0], 1.293, 1e-6);
  EXPECT_NEAR(fit_capacity_form(CapacityForm::jl, jl).params[0], 3.029, 1e-6);
  EXPECT_THROW(fit_capacity_form(CapacityForm::full, std::vector<PackingPoint>(single.begin(), single.begin() + 3)),
               DataError);
  EXPECT_EQ(parse_form("single"), CapacityForm::single);
  EXPECT_THROW(parse_form("quadratic"), UsageError);
}
