#include "ember/model/lev.h"

#include <cmath>

#include "ember/model/autocast.h"
#include "ember/model/init.h"
#include "ember/util/error.h"
#include "ember/kernels/kernel_choice.h"
#include "kernels/lev_spline.h"

namespace ember {

void LevConfig::fields(FieldVisitor& v) {
  v.field("k", k, Bound::positive());
  v.field("d_seed", d_seed, Bound::positive());
  v.field("heads", heads, Bound::positive());
  v.field("knots", knots, Bound{3.0, 1e9, false, ">= 3"});
  v.field("rank", rank, Bound::positive());
  v.choice("squash", squash);
  v.field("normalize_basis", normalize_basis);
  v.field("learnable_knot_scale", learnable_knot_scale);
  v.choice("impl", impl);
}

void LevConfig::check(const ConfigChecker& c, const std::string& path) const {
  c.require(!learnable_knot_scale || impl != LevImpl::fused, path + ".learnable_knot_scale",
            "needs " + path + ".impl = reference or auto (the fused kernels assume the fixed knot grid)");
}

int64_t lev_base(int64_t vocab, int64_t k) {
  int64_t b = std::max<int64_t>(2, static_cast<int64_t>(std::floor(std::pow(static_cast<double>(vocab), 1.0 / k))));
  auto power = [k](int64_t base) {
    double p = 1;
    for (int64_t j = 0; j < k; ++j) p *= static_cast<double>(base);
    return p;
  };
  while (b > 2 && power(b - 1) >= static_cast<double>(vocab)) --b;
  while (power(b) < static_cast<double>(vocab)) ++b;
  return b;
}

int64_t lev_parameter_count(int64_t vocab, int64_t dim, const LevConfig& c) {
  const int64_t ds = c.d_seed;
  return c.k * lev_base(vocab, c.k) * ds + c.heads * (ds * ds + 2 * ds + ds * c.knots * c.rank + c.rank * dim) +
         (c.learnable_knot_scale ? c.heads * ds : 0);
}

at::Tensor lev_digits(const at::Tensor& ids, int64_t base, int64_t k) {
  std::vector<at::Tensor> digits(static_cast<size_t>(k));
  auto rest = ids;
  for (int64_t j = k - 1; j >= 0; --j) {  // least significant digit last
    digits[static_cast<size_t>(j)] = rest.remainder(base);
    rest = rest.div(base, "floor");
  }
  return at::stack(digits);
}

at::Tensor compositional_seed(const at::Tensor& codebooks, const at::Tensor& ids, int64_t base) {
  auto digits = lev_digits(ids, base, codebooks.size(0));
  at::Tensor z;
  for (int64_t j = 0; j < codebooks.size(0); ++j) {  // z(i) = sum_j C_j[i_j]
    auto part = at::embedding(codebooks[j], digits[j]);
    z = z.defined() ? z + part : part;
  }
  return z;
}

LevEmbedding::LevEmbedding(int64_t vocab, int64_t dim, const LevConfig& cfg)
    : vocab_(vocab), dim_(dim), base_(lev_base(vocab, cfg.k)), cfg_(cfg) {
  const int64_t h = cfg.heads, ds = cfg.d_seed;
  if (cfg.learnable_knot_scale && cfg.impl == LevImpl::fused)
    throw ConfigError(
        "model.embedding.lev.learnable_knot_scale needs model.embedding.lev.impl = reference or auto "
        "(the fused kernels assume the fixed knot grid)");
  codebooks_ = register_parameter("codebooks", normal_parameter({cfg.k, base_, ds}, 0.02));
  seed_proj_ = register_parameter("seed_proj", normal_parameter({h, ds, ds}, 0.02));
  ln_weight_ = register_parameter("ln_weight", ones_parameter({h, ds}));
  ln_bias_ = register_parameter("ln_bias", full_parameter({h, ds}, 0.0));
  auto spline = normal_parameter({h, ds, cfg.knots, cfg.rank}, 0.1);
  spline_ = register_parameter("spline", spline.add_(1.0));  // S = 1 + N(0, 0.1)
  out_proj_ = register_parameter("out_proj", normal_parameter({h * cfg.rank, dim}, 0.02 / std::sqrt(double(h))));
  if (cfg.learnable_knot_scale)
    knot_scale_ = register_parameter("knot_scale", full_parameter({h, ds}, double(cfg.knots - 1)));
}

at::Tensor LevEmbedding::squashed_seeds(const at::Tensor& ids) {
  auto z = compositional_seed(codebooks_, ids, base_);  // [N, d_s]
  auto s = at::einsum("nd,hed->nhe", {z, seed_proj_});  // W_seed_l z, [N, h, d_s]
  // LayerNorm_l; on the meta device (shapes only) ATen's C++ build has no layer_norm kernel.
  auto normed = s.is_meta() ? s - s.mean(-1, true) : at::layer_norm(s, {cfg_.d_seed}, {}, {}, 1e-5);
  auto ln = normed * ln_weight_ + ln_bias_;
  return at::sigmoid(cfg_.squash == LevSquash::sigmoid_half_ln ? 0.5 * ln : ln);  // u_l in [0, 1]^{d_s}
}

// impl = auto: the fused kernels unless the knot scale is learnt or kernels.lev says aten.
bool LevEmbedding::fused(const at::Tensor& u) const {
  if (cfg_.impl != LevImpl::automatic) return cfg_.impl == LevImpl::fused;
  return !cfg_.learnable_knot_scale && kernels::use_fused(kernels::Op::lev, u.device());
}

at::Tensor LevEmbedding::generate(const at::Tensor& ids) {
  NoAutocastScope fp32(ids.device());  // basis and product always in fp32 (step 8)
  auto u = squashed_seeds(ids);
  auto M = fused(u) ? lev::spline_product(u, spline_, cfg_.normalize_basis)
                    : lev::spline_product_reference(u, spline_, cfg_.normalize_basis, knot_scale_);
  return at::matmul(M.reshape({M.size(0), -1}), out_proj_);  // E(i) = sum_l M_l W_out_l  (step 7)
}

at::Tensor LevEmbedding::embed(const at::Tensor& ids) {
  auto flat = ids.reshape({-1});
  auto sizes = ids.sizes().vec();
  sizes.push_back(dim_);
  if (ids.is_meta()) return generate(flat).view(sizes);  // shapes only: no ids to deduplicate
  auto [unique, inverse, counts] = at::_unique2(flat, /*sorted=*/true, /*return_inverse=*/true, false);
  auto rows = generate(unique);                      // G only for the unique ids of the batch
  return rows.index_select(0, inverse).view(sizes);  // backward scatters into the unique rows
}

}  // namespace ember
