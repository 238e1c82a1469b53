// model.* keys: the LLaMA-style chassis and the three seams (embedding, mixer, per-layer MLP widths).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ember/config/fields.h"

namespace ember {

// model.embedding.lev.*: the LEV generator (spec/leviathan.md); defaults are the paper's.
struct LevConfig {
  int64_t k = 3;         // digits of the compositional index
  int64_t d_seed = 128;  // seed / codebook width d_s
  int64_t heads = 8;     // h
  int64_t knots = 16;    // kappa
  int64_t rank = 64;     // r
  std::string squash = "sigmoid_half_ln";  // sigmoid_half_ln: sigmoid(0.5 LN(.)) | sigmoid_ln
  bool normalize_basis = true;
  bool learnable_knot_scale = false;
  std::string impl = "fused";  // fused (CPU/CUDA kernels) | reference (plain ATen ops)

  template <class V>
  void fields(V& v) {
    v.field("k", k, Bound::positive());
    v.field("d_seed", d_seed, Bound::positive());
    v.field("heads", heads, Bound::positive());
    v.field("knots", knots, Bound{3.0, 1e9, false, ">= 3"});
    v.field("rank", rank, Bound::positive());
    v.choice("squash", squash, {"sigmoid_half_ln", "sigmoid_ln"});
    v.field("normalize_basis", normalize_basis);
    v.field("learnable_knot_scale", learnable_knot_scale);
    v.choice("impl", impl, {"fused", "reference"});
  }
};

struct EmbeddingConfig {
  // tied | untied | albert | flat_mlp | factored_mlp | lev (all but tied have a dense head)
  std::string kind = "tied";
  double output_scale = 1.0;  // logits multiplier (e.g. 1/sqrt(d) conventions for tied heads)
  LevConfig lev;
  // Baseline sizes; 0 = chosen so the input side matches P_LEV of the lev settings above.
  int64_t albert_dim = 0;  // albert: m in E(i) = A[i] P
  int64_t seed_dim = 0;    // flat_mlp: per-token seed width m
  int64_t mlp_hidden = 0;  // flat_mlp / factored_mlp: hidden width of the MLP to D

  template <class V>
  void fields(V& v) {
    v.choice("kind", kind, {"tied", "untied", "albert", "flat_mlp", "factored_mlp", "lev"});
    v.field("output_scale", output_scale, Bound::positive());
    v.section("lev", lev);
    v.field("albert_dim", albert_dim, Bound::non_negative());
    v.field("seed_dim", seed_dim, Bound::non_negative());
    v.field("mlp_hidden", mlp_hidden, Bound::non_negative());
  }
};

struct MixerConfig {
  std::string kind = "attention";   // attention | gated_attention (titans, hope_attention later)
  std::string impl = "sdpa";        // sdpa (fused at::scaled_dot_product_attention) | reference
  double rope_base = 10000.0;
  std::string gate = "elementwise";  // gated_attention only: elementwise | headwise | none (spec §3)

  template <class V>
  void fields(V& v) {
    v.choice("kind", kind, {"attention", "gated_attention"});
    v.choice("impl", impl, {"sdpa", "reference"});
    v.field("rope_base", rope_base, Bound::positive());
    v.choice("gate", gate, {"elementwise", "headwise", "none"});
  }
};

// model.mlp.taper.*: how d_ff shrinks with depth at a fixed budget (spec/tapered.md).
struct TaperConfig {
  std::string schedule = "uniform";  // uniform | linear | cosine | sigmoid | groups
  double start = 1.5;                // rho_start: first layer width = start * d_ff
  double end = 0.5;                  // rho_end: last layer width = end * d_ff
  double steepness = 10.0;           // sigmoid k
  int64_t multiple_of = 16;          // widths rounded to this multiple
  std::vector<double> groups = {1.5, 1.0, 0.5};  // groups: factor per equal group of layers

  template <class V>
  void fields(V& v) {
    v.choice("schedule", schedule, {"uniform", "linear", "cosine", "sigmoid", "groups"});
    v.field("start", start, Bound::positive());
    v.field("end", end, Bound::positive());
    v.field("steepness", steepness, Bound::positive());
    v.field("multiple_of", multiple_of, Bound::positive());
    v.field("groups", groups, Bound::positive());
  }
};

struct MlpConfig {
  int64_t d_ff = 0;  // 0: 256 * ceil(8d/3 / 256), the fla/LLaMA default (spec/mixers.md §1)
  TaperConfig taper;

  template <class V>
  void fields(V& v) {
    v.field("d_ff", d_ff, Bound::non_negative());
    v.section("taper", taper);
  }
};

struct ModelConfig {
  int64_t vocab_size = 256;
  int64_t d_model = 128;
  int64_t n_layers = 4;
  int64_t n_heads = 4;
  int64_t n_kv_heads = 0;  // 0: same as n_heads (MHA)
  int64_t max_seq_len = 256;
  double norm_eps = 1e-6;
  double init_std = 0.02;
  bool scale_residual_init = false;  // o_proj and down_proj std divided by sqrt(2L)
  EmbeddingConfig embedding;
  MixerConfig mixer;
  MlpConfig mlp;

  template <class V>
  void fields(V& v) {
    v.field("vocab_size", vocab_size, Bound::positive());
    v.field("d_model", d_model, Bound::positive());
    v.field("n_layers", n_layers, Bound::positive());
    v.field("n_heads", n_heads, Bound::positive());
    v.field("n_kv_heads", n_kv_heads, Bound::non_negative());
    v.field("max_seq_len", max_seq_len, Bound::positive());
    v.field("norm_eps", norm_eps, Bound::positive());
    v.field("init_std", init_std, Bound::positive());
    v.field("scale_residual_init", scale_residual_init);
    v.section("embedding", embedding);
    v.section("mixer", mixer);
    v.section("mlp", mlp);
  }
  void check(const ConfigChecker& c) const;

  int64_t kv_heads() const { return n_kv_heads == 0 ? n_heads : n_kv_heads; }
  int64_t head_dim() const { return d_model / n_heads; }
  int64_t base_d_ff() const;
  std::vector<int64_t> layer_d_ff() const;  // one width per layer (the taper seam)
};

}  // namespace ember
