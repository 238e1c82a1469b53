// LEV embeddings (docs/leviathan.md): a small continuous generator G: id -> R^D replaces the
// dense input table. Compositional base-b digits -> summed codebook seeds -> per head
// sigmoid(0.5 LN(W_seed z)) -> quadratic B-spline basis -> rank-r separable tensor product ->
// sum over heads of M_l W_out_l. G runs once per unique id of the batch.
#pragma once
#include "ember/model/embedding.h"

namespace ember {

enum class LevSquash { sigmoid_half_ln, sigmoid_ln };
inline std::span<const EnumName<LevSquash>> enum_names(LevSquash) {
  static constexpr EnumName<LevSquash> names[] = {{LevSquash::sigmoid_half_ln, "sigmoid_half_ln"},
                                                  {LevSquash::sigmoid_ln, "sigmoid_ln"}};
  return names;
}
// fused CPU/CUDA kernels | plain ATen ops | fused unless the knot scale is learnable
enum class LevImpl { fused, reference, automatic };
inline std::span<const EnumName<LevImpl>> enum_names(LevImpl) {
  static constexpr EnumName<LevImpl> names[] = {
      {LevImpl::automatic, "auto"}, {LevImpl::fused, "fused"}, {LevImpl::reference, "reference"}};
  return names;
}

// model.embedding.lev.*: the LEV generator; defaults are the paper's.
struct LevConfig {
  static constexpr const char* kKind = "lev";
  int64_t k = 3;                                  // digits of the compositional index
  int64_t d_seed = 128;                           // seed / codebook width d_s
  int64_t heads = 8;                              // h
  int64_t knots = 16;                             // kappa
  int64_t rank = 64;                              // r
  LevSquash squash = LevSquash::sigmoid_half_ln;  // sigmoid(0.5 LN(.)) | sigmoid(LN(.))
  bool normalize_basis = true;
  bool learnable_knot_scale = false;
  LevImpl impl = LevImpl::automatic;

  void fields(FieldVisitor& v);
  void check(const ConfigChecker& c, const std::string& path) const;
};

// b = ceil(V^(1/k)): the smallest b with b^k >= V (step 1).
int64_t lev_base(int64_t vocab, int64_t k);
// P_LEV = k b d_s + h (d_s^2 + 2 d_s + d_s kappa r + r D)  (+ h d_s with a learnable knot scale)
int64_t lev_parameter_count(int64_t vocab, int64_t dim, const LevConfig& cfg);
// Digits of ids [N] in base b, most significant first: [k, N] (last digit = id mod b).
at::Tensor lev_digits(const at::Tensor& ids, int64_t base, int64_t k);

class LevEmbedding : public Embedding {
 public:
  LevEmbedding(int64_t vocab, int64_t dim, const LevConfig& cfg);
  at::Tensor embed(const at::Tensor& ids) override;
  int64_t vocab_size() const override { return vocab_; }
  // G for a list of (unique) ids [N] -> [N, D].
  at::Tensor generate(const at::Tensor& ids);
  // u [N, h, d_s]: the squashed per-head seeds fed to the spline (step 3).
  at::Tensor squashed_seeds(const at::Tensor& ids);
  void set_impl(LevImpl impl) { cfg_.impl = impl; }

 private:
  bool fused(const at::Tensor& u) const;
  int64_t vocab_, dim_, base_;
  LevConfig cfg_;
  at::Tensor codebooks_, seed_proj_, ln_weight_, ln_bias_, spline_, out_proj_, knot_scale_;
};

// Compositional seed shared by LEV and factored_mlp: z(i) = sum_j C_j[i_j]  (step 2).
at::Tensor compositional_seed(const at::Tensor& codebooks, const at::Tensor& ids, int64_t base);

}  // namespace ember
