// LEV embeddings (docs/leviathan.md): parameter count, basis, digits, fused kernels against the
// ATen reference (values and gradients), finite differences, duplicates, bf16, baselines.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/model/autocast.h"
#include "ember/model/embedding_baselines.h"
#include "ember/model/embedding_registry.h"
#include "ember/model/init.h"
#include "ember/model/lev.h"
#include "ember/model/lm.h"
#include "ember/train/adamw.h"
#include "ember/util/error.h"
#include "kernels/lev_spline.h"
#include "kernels/lev_spline_math.h"
#include "test_helpers.h"

using ember::LevConfig;

namespace {

LevConfig small_lev() {
  LevConfig c;
  c.k = 2, c.d_seed = 6, c.heads = 2, c.knots = 5, c.rank = 3;
  return c;
}

// u in [0, 1] and S around 1, as after initialisation.
std::pair<at::Tensor, at::Tensor> spline_inputs(int64_t N, int64_t H, int64_t DS, int64_t K, int64_t R,
                                                at::ScalarType t) {
  torch::manual_seed(11);
  auto u = torch::rand({N, H, DS}, t);
  auto S = 1.0 + 0.3 * torch::randn({H, DS, K, R}, t);
  return {u, S};
}

}  // namespace

TEST(Lev, ParameterCountMatchesTheClosedForm) {
  EXPECT_EQ(ember::lev_base(200376, 3), 59);
  EXPECT_EQ(ember::lev_base(50257, 3), 37);
  EXPECT_EQ(ember::lev_base(256, 3), 7);
  EXPECT_EQ(ember::lev_base(1000, 3), 10);  // exact cube
  LevConfig defaults;
  EXPECT_EQ(ember::lev_parameter_count(200376, 2048, defaults), 2252928);  // the spec's 2.253M
  ember::MetaInitScope meta;
  ember::LevEmbedding big(200376, 2048, defaults);
  EXPECT_EQ(ember::testing::parameter_count(big), 2252928);
  auto c = small_lev();
  c.learnable_knot_scale = true;
  c.impl = ember::LevImpl::reference;
  ember::LevEmbedding with_scale(100, 16, c);
  EXPECT_EQ(ember::testing::parameter_count(with_scale), ember::lev_parameter_count(100, 16, c));
}

TEST(Lev, BasisValuesAtKnotsAndMidpointsAndPartitionOfUnity) {
  using ember::lev::basis_window;
  using ember::lev::bspline2;
  EXPECT_DOUBLE_EQ(bspline2(0.0), 0.75);
  EXPECT_DOUBLE_EQ(bspline2(0.5), 0.5);
  EXPECT_DOUBLE_EQ(bspline2(1.0), 0.125);
  EXPECT_DOUBLE_EQ(bspline2(1.5), 0.0);
  const int K = 9;
  for (double x = 0.0; x <= 1.0; x += 1.0 / 97) {
    auto raw = basis_window<double>(x, K, false);
    auto w = basis_window<double>(x, K, true);
    double sum = 0, raw_sum = 0;
    for (int j = 0; j < w.count; ++j) sum += w.value[j], raw_sum += raw.value[j];
    EXPECT_NEAR(sum, 1.0, 1e-14) << x;
    const double p = x * (K - 1);
    if (p >= 1.0 && p <= K - 2.0) {
      EXPECT_NEAR(raw_sum, 1.0, 1e-14) << x;  // interior: already a partition
    }
    EXPECT_LE(w.count, 3);
  }
  auto at_knot = basis_window<double>(4.0 / 8.0, K, false);  // on knot 4: 0.125, 0.75, 0.125
  EXPECT_EQ(at_knot.first, 3);
  EXPECT_DOUBLE_EQ(at_knot.value[1], 0.75);
  EXPECT_DOUBLE_EQ(at_knot.value[0], 0.125);
  auto mid = basis_window<double>(4.5 / 8.0, K, false);  // midway between knots 4 and 5
  double v4 = 0, v5 = 0;
  for (int j = 0; j < mid.count; ++j) {
    if (mid.first + j == 4) v4 = mid.value[j];
    if (mid.first + j == 5) v5 = mid.value[j];
  }
  EXPECT_DOUBLE_EQ(v4, 0.5);
  EXPECT_DOUBLE_EQ(v5, 0.5);
}

TEST(Lev, BasisIsC1Continuous) {
  // Value and derivative of each basis function agree from both sides of every breakpoint.
  const int K = 7;
  auto basis_at = [&](double x, int m, bool deriv) {
    auto w = ember::lev::basis_window<double>(x, K, true);
    for (int j = 0; j < w.count; ++j)
      if (w.first + j == m) return deriv ? w.deriv[j] : w.value[j];
    return 0.0;
  };
  for (int m = 0; m < K; ++m) {
    for (double bp = 0.5; bp < K - 1; bp += 1.0) {  // breakpoints at half-integers of p = x (K-1)
      const double x = bp / (K - 1), h = 1e-9;
      EXPECT_NEAR(basis_at(x - h, m, false), basis_at(x + h, m, false), 1e-7) << m << " " << bp;
      EXPECT_NEAR(basis_at(x - h, m, true), basis_at(x + h, m, true), 1e-5) << m << " " << bp;
    }
  }
  // The analytic derivative matches a central difference.
  for (double x : {0.13, 0.41, 0.77, 0.02, 0.99}) {
    for (int m = 0; m < K; ++m) {
      const double h = 1e-6;
      const double fd = (basis_at(x + h, m, false) - basis_at(x - h, m, false)) / (2 * h);
      EXPECT_NEAR(basis_at(x, m, true), fd, 1e-5) << x << " " << m;
    }
  }
}

TEST(Lev, DigitsDecomposeAndRecomposeEveryId) {
  const int64_t V = 1000, b = ember::lev_base(V, 3);
  auto ids = torch::arange(V);
  auto digits = ember::lev_digits(ids, b, 3);
  EXPECT_TRUE(torch::equal(digits[0] * b * b + digits[1] * b + digits[2], ids));
  EXPECT_TRUE(torch::equal(digits[2], ids.remainder(b)));  // last digit = i mod b
  EXPECT_LT(digits.max().item<int64_t>(), b);
}

TEST(Lev, FusedForwardEqualsReference) {
  for (bool normalize : {true, false}) {
    auto [u, S] = spline_inputs(7, 3, 20, 8, 5, torch::kDouble);
    auto fused = ember::lev::spline_product(u, S, normalize),
         ref = ember::lev::spline_product_reference(u, S, normalize);
    EXPECT_LT(((fused - ref).abs() / ref.abs()).max().item<double>(), 1e-10) << normalize;
    auto [uf, Sf] = spline_inputs(7, 3, 20, 8, 5, torch::kFloat);
    auto f32 = ember::lev::spline_product(uf, Sf, normalize),
         r32 = ember::lev::spline_product_reference(uf, Sf, normalize);
    EXPECT_LT(((f32 - r32).abs() / r32.abs()).max().item<double>(), 1e-5) << normalize;
  }
}

TEST(Lev, FusedGradientsMatchAutogradOfTheReference) {
  auto [u0, S0] = spline_inputs(6, 2, 12, 6, 4, torch::kDouble);
  auto gM = torch::randn({6, 2, 4}, torch::kDouble);
  auto u1 = u0.clone().requires_grad_(), S1 = S0.clone().requires_grad_();
  (ember::lev::spline_product(u1, S1, true) * gM).sum().backward();
  auto u2 = u0.clone().requires_grad_(), S2 = S0.clone().requires_grad_();
  (ember::lev::spline_product_reference(u2, S2, true) * gM).sum().backward();
  EXPECT_LT((u1.grad() - u2.grad()).abs().max().item<double>(), 1e-9 * (1 + u2.grad().abs().max().item<double>()));
  EXPECT_LT((S1.grad() - S2.grad()).abs().max().item<double>(), 1e-9 * (1 + S2.grad().abs().max().item<double>()));
}

TEST(Lev, FiniteDifferenceGradcheckOfTheWholeGenerator) {
  torch::manual_seed(3);
  auto c = small_lev();
  ember::LevEmbedding lev(40, 5, c);
  lev.to(torch::kDouble);
  auto ids = torch::tensor({3, 17, 39, 3}, torch::kLong);
  auto weights = torch::randn({4, 5}, torch::kDouble);
  auto loss = [&] { return (lev.forward(ids) * weights).sum(); };
  loss().backward();
  for (const auto& item : lev.named_parameters()) {
    auto p = item.value();
    auto flat = p.data().view({-1});
    for (int64_t i = 0; i < flat.numel(); i += std::max<int64_t>(1, flat.numel() / 7)) {
      const double h = 1e-6, orig = flat[i].item<double>();
      double up, down;
      {
        torch::NoGradGuard ng;
        flat[i] = orig + h;
        up = loss().item<double>();
        flat[i] = orig - h;
        down = loss().item<double>();
        flat[i] = orig;
      }
      const double fd = (up - down) / (2 * h), an = p.grad().view({-1})[i].item<double>();
      EXPECT_NEAR(an, fd, 1e-6 * (1 + std::abs(fd))) << item.key() << "[" << i << "]";
    }
  }
}

TEST(Lev, DuplicatedIdsAccumulateGradients) {
  torch::manual_seed(4);
  ember::LevEmbedding lev(30, 8, small_lev());
  auto w = torch::randn({8});
  (lev.forward(torch::tensor({5, 5, 5}, torch::kLong)) * w).sum().backward();
  auto once = lev.named_parameters()["out_proj"].grad().clone();
  lev.zero_grad();
  (lev.forward(torch::tensor({5}, torch::kLong)) * w).sum().backward();
  EXPECT_TRUE(torch::allclose(once, 3 * lev.named_parameters()["out_proj"].grad(), 1e-5, 1e-7));
}

namespace {
// E(i) of docs/leviathan.md steps 1-7 for one id, written out in scalar fp64 loops from the module's
// parameters (no ATen op of the module's path): digits, summed codebook rows, W_seed z, LayerNorm,
// the squash, every knot's B-spline bump, phi, the regularised signed product and sum_l M_l W_out_l.
std::vector<double> lev_row_by_loops(torch::nn::Module& lev, const LevConfig& c, int64_t vocab, int64_t dim,
                                     int64_t id) {
  auto p = lev.named_parameters();
  auto C = p["codebooks"].to(torch::kDouble), W = p["seed_proj"].to(torch::kDouble);
  auto gamma = p["ln_weight"].to(torch::kDouble), beta = p["ln_bias"].to(torch::kDouble);
  auto S = p["spline"].to(torch::kDouble), Wout = p["out_proj"].to(torch::kDouble);
  const int64_t b = ember::lev_base(vocab, c.k), ds = c.d_seed, K = c.knots, R = c.rank;
  std::vector<double> z(ds, 0.0), E(dim, 0.0);
  for (int64_t j = c.k - 1, rest = id; j >= 0; --j, rest /= b)  // step 1: last digit = id mod b
    for (int64_t d = 0; d < ds; ++d) z[d] += C[j][rest % b][d].item<double>();  // step 2
  auto bump = [](double t) { return t < 0.5 ? 0.75 - t * t : t < 1.5 ? 0.5 * (1.5 - t) * (1.5 - t) : 0.0; };
  for (int64_t l = 0; l < c.heads; ++l) {
    std::vector<double> s(ds, 0.0), u(ds);
    for (int64_t e = 0; e < ds; ++e)
      for (int64_t d = 0; d < ds; ++d) s[e] += W[l][e][d].item<double>() * z[d];  // step 3: W_seed_l z
    double mean = 0, var = 0;
    for (double v : s) mean += v / ds;
    for (double v : s) var += (v - mean) * (v - mean) / ds;
    const double squash = c.squash == ember::LevSquash::sigmoid_half_ln ? 0.5 : 1.0;
    for (int64_t d = 0; d < ds; ++d) {
      const double ln = (s[d] - mean) / std::sqrt(var + 1e-5) * gamma[l][d].item<double>() + beta[l][d].item<double>();
      u[d] = 1.0 / (1.0 + std::exp(-squash * ln));
    }
    for (int64_t rho = 0; rho < R; ++rho) {
      double log_sum = 0, sign = 1;
      for (int64_t d = 0; d < ds; ++d) {
        std::vector<double> B(K);
        double total = 0;
        for (int64_t m = 0; m < K; ++m) total += B[m] = bump(std::abs(u[d] - double(m) / (K - 1)) * (K - 1));  // step 4
        double phi = 0;
        for (int64_t m = 0; m < K; ++m)
          phi += (c.normalize_basis ? B[m] / total : B[m]) * S[l][d][m][rho].item<double>();  // step 5
        if (phi < 0) sign = -sign;
        log_sum += std::log(std::abs(phi) + 1e-9);  // step 6
      }
      const double M = sign * std::exp(log_sum);
      for (int64_t o = 0; o < dim; ++o) E[o] += M * Wout[l * R + rho][o].item<double>();  // step 7
    }
  }
  return E;
}
}  // namespace

// The whole generator against the loops above, in fp64, for both squashes, both basis
// normalisations and both implementations, at ids whose digits hit 0 and b - 1.
TEST(Lev, GeneratorEqualsTheSpecWrittenOutInLoops) {
  const int64_t vocab = 343, dim = 5;  // b = 7, k = 3
  for (auto squash : {ember::LevSquash::sigmoid_half_ln, ember::LevSquash::sigmoid_ln})
    for (bool normalize : {true, false})
      for (auto impl : {ember::LevImpl::fused, ember::LevImpl::reference}) {
        auto c = small_lev();
        c.k = 3, c.squash = squash, c.normalize_basis = normalize, c.impl = impl;
        torch::manual_seed(21);
        ember::LevEmbedding lev(vocab, dim, c);
        lev.to(torch::kDouble);
        torch::NoGradGuard no_grad;
        for (auto& p : lev.named_parameters())  // away from the initial gamma = 1, beta = 0
          if (p.key() == "ln_weight" || p.key() == "ln_bias" || p.key() == "codebooks")
            p.value().add_(0.5 * torch::randn_like(p.value()));
        const std::vector<int64_t> ids{0, 6, 48, 342, 100};
        auto got = lev.generate(torch::tensor(ids, torch::kLong));
        for (size_t n = 0; n < ids.size(); ++n) {
          auto want = lev_row_by_loops(lev, c, vocab, dim, ids[n]);
          for (int64_t o = 0; o < dim; ++o)
            EXPECT_NEAR(got[static_cast<int64_t>(n)][o].item<double>(), want[o], 1e-12 * (1 + std::abs(want[o])))
                << "id " << ids[n] << " dim " << o << " normalize " << normalize << " squash " << int(squash)
                << " impl " << int(impl);
        }
      }
}

TEST(Lev, FusedModuleEqualsReferenceModule) {
  torch::manual_seed(5);
  ember::LevEmbedding lev(500, 24, small_lev());
  auto ids = torch::randint(0, 500, {3, 9}, torch::kLong);
  auto fused = lev.forward(ids);
  lev.set_impl(ember::LevImpl::reference);
  EXPECT_LT((fused - lev.forward(ids)).abs().max().item<double>(), 1e-5 * fused.abs().max().item<double>());
}

// impl: auto (the default) runs the fused kernels on the fixed grid and the reference ops when the
// knot scale is learnable, so flipping only learnable_knot_scale trains the scale.
TEST(Lev, AutoImplIsFusedOnTheFixedGridAndReferenceWithALearnableKnotScale) {
  auto ids = torch::randint(0, 300, {2, 7}, torch::kLong);
  auto make = [](ember::LevImpl impl, bool learnable) {
    auto c = small_lev();
    c.impl = impl, c.learnable_knot_scale = learnable;
    torch::manual_seed(8);
    return ember::LevEmbedding(300, 16, c);
  };
  using ember::LevImpl;
  EXPECT_TRUE(torch::equal(make(LevImpl::automatic, false).forward(ids), make(LevImpl::fused, false).forward(ids)));
  auto learnable = make(LevImpl::automatic, true);
  auto out = learnable.forward(ids);
  EXPECT_TRUE(torch::equal(out, make(LevImpl::reference, true).forward(ids)));
  out.square().sum().backward();
  auto scale = learnable.named_parameters()["knot_scale"];
  ASSERT_TRUE(scale.grad().defined());
  EXPECT_GT(scale.grad().abs().max().item<double>(), 0.0);
  EXPECT_THROW(make(LevImpl::fused, true), ember::ConfigError);
}

TEST(Lev, ProductStaysFiniteForDefaultSeedWidth) {
  torch::manual_seed(6);
  LevConfig defaults;  // d_s = 128: a plain product of 128 factors would under/overflow
  ember::LevEmbedding lev(50257, 64, defaults);
  auto out = lev.forward(torch::randint(0, 50257, {2, 64}, torch::kLong));
  EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
  EXPECT_GT(out.abs().max().item<double>(), 0.0);
}

TEST(Lev, Bf16AutocastKeepsBasisAndProductInFp32) {
  torch::manual_seed(7);
  ember::LevEmbedding lev(300, 16, small_lev());
  auto ids = torch::randint(0, 300, {2, 5}, torch::kLong);
  auto plain = lev.forward(ids);
  ember::AutocastScope bf16(at::kCPU, true);
  auto u = lev.squashed_seeds(torch::arange(4));
  auto out = lev.forward(ids);
  EXPECT_EQ(out.scalar_type(), at::kFloat);
  EXPECT_TRUE(torch::equal(out, plain));  // no bf16 anywhere in the generator
  EXPECT_EQ(u.scalar_type(), at::kFloat);
}

TEST(Lev, BaselinesMatchTheLevInputSideWithin2Percent) {
  for (auto [V, D] : std::vector<std::pair<int64_t, int64_t>>{{50257, 768}, {200376, 2048}, {32000, 512}}) {
    ember::ModelConfig c;
    c.vocab_size = V, c.d_model = D;
    const double target = static_cast<double>(ember::lev_parameter_count(V, D, c.embedding.get<LevConfig>()));
    ember::MetaInitScope meta;
    int sized = 0;
    for (const auto& row : ember::embedding_kinds()) {
      if (!row.budget) continue;  // the kinds sized to P_LEV
      const std::string& kind = row.name;
      ++sized;
      c.embedding.kind = kind;
      auto e = ember::make_embedding(c);
      EXPECT_NEAR(ember::testing::parameter_count(*e) / target, 1.0, 0.02) << kind << " V=" << V << " D=" << D;
      EXPECT_FALSE(e->tied_table().defined());
    }
    EXPECT_EQ(sized, 4) << "albert, flat_mlp, factored_mlp and lev are sized to P_LEV";
  }
}

TEST(Lev, LanguageModelWithEveryEmbeddingKindTrainsAStep) {
  size_t kinds = 0;
  for (const auto& row : ember::embedding_kinds()) {
    const std::string& kind = row.name;
    ember::ModelConfig c;
    c.vocab_size = 64, c.d_model = 32, c.n_layers = 1, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 64;
    c.embedding.kind = kind;
    c.embedding.get<LevConfig>() = small_lev();
    c.embedding.get<ember::FlatMlpConfig>() = {.seed_dim = 4, .hidden = 16};
    c.embedding.get<ember::FactoredMlpConfig>().hidden = 16;
    torch::manual_seed(8);
    ember::LanguageModel m(c);
    ember::OptimConfig oc;
    oc.weight_decay = 0.0;
    ember::AdamW opt(m.named_parameters().pairs(), oc);
    auto ids = torch::randint(0, 64, {2, 8}, torch::kLong);
    auto targets = torch::roll(ids, 1, 1);
    const double first = m.loss(ids, targets).item<double>();
    for (int step = 0; step < 5; ++step) {
      auto loss = m.loss(ids, targets);
      loss.backward();
      if (step == 0) {
        for (const auto& p : m.embedding().parameters()) EXPECT_TRUE(p.grad().defined()) << kind;
      }
      opt.step(1e-2);
      opt.zero_grad();
    }
    const double last = m.loss(ids, targets).item<double>();
    EXPECT_TRUE(std::isfinite(last)) << kind;
    EXPECT_LT(last, first - 0.05) << kind << ": five AdamW steps on one batch did not lower its loss";
    EXPECT_EQ(m.embedding().materialize(10).sizes(), (std::vector<int64_t>{64, 32})) << kind;
    ++kinds;
  }
  EXPECT_EQ(kinds, ember::embedding_kind_names().size());
  EXPECT_GE(kinds, 6u);
}

// An id outside [0, V) is an IndexError naming it, for every kind: the digit decompositions (LEV,
// factored_mlp) would otherwise give id V + 5 the row of id 5, and a table would read past its end.
// The loss's targets are held to the same range.
TEST(Lev, EveryEmbeddingKindRefusesIdsOutsideTheVocabulary) {
  for (const auto& row : ember::embedding_kinds()) {
    ember::ModelConfig c;
    c.vocab_size = 64, c.d_model = 32, c.n_layers = 1, c.n_heads = 2, c.max_seq_len = 16, c.mlp.d_ff = 64;
    c.embedding.kind = row.name;
    c.embedding.get<LevConfig>() = small_lev();
    c.embedding.get<ember::FlatMlpConfig>() = {.seed_dim = 4, .hidden = 16};
    c.embedding.get<ember::FactoredMlpConfig>().hidden = 16;
    ember::LanguageModel m(c);
    auto ids = torch::randint(0, 64, {2, 8}, torch::kLong);
    for (int64_t bad : {64, 69, -1}) {
      auto wrong = ids.clone();
      wrong[1][3] = bad;
      const auto what = ember::testing::error_message([&] { m.embedding().forward(wrong); });
      EXPECT_NE(what.find("token id " + std::to_string(bad) + " is out of range: ids must be in [0, 64)"),
                std::string::npos) << row.name << ": " << what;
      EXPECT_THROW(m.forward(wrong), ember::IndexError) << row.name;
      EXPECT_THROW(m.loss(ids, wrong), ember::IndexError) << row.name << ": target " << bad;
    }
    torch::NoGradGuard no_grad;
    EXPECT_NO_THROW(m.loss(ids, ids)) << row.name;
  }
}
