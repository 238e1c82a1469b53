// model.* keys: the LLaMA-style chassis and the three seams (embedding, mixer, per-layer MLP widths).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ember/config/fields.h"

namespace ember {

struct EmbeddingConfig {
  std::string kind = "tied";  // tied | untied (LEV and the baselines plug in here)
  double output_scale = 1.0;  // logits multiplier (e.g. 1/sqrt(d) conventions for tied heads)

  template <class V>
  void fields(V& v) {
    v.choice("kind", kind, {"tied", "untied"});
    v.field("output_scale", output_scale, Bound::positive());
  }
};

struct MixerConfig {
  std::string kind = "attention";   // attention (gated_attention, titans, hope_attention later)
  std::string impl = "sdpa";        // sdpa (fused at::scaled_dot_product_attention) | reference
  double rope_base = 10000.0;

  template <class V>
  void fields(V& v) {
    v.choice("kind", kind, {"attention"});
    v.choice("impl", impl, {"sdpa", "reference"});
    v.field("rope_base", rope_base, Bound::positive());
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
