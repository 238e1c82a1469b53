// The model shape the training benchmarks take as their first positional arguments:
// V D L H D_FF B T (vocab, width, layers, heads, MLP width, batch, sequence length).
#pragma once
#include <string>

#include "ember/model/model_config.h"

namespace ember::bench {

struct BenchShape {
  ModelConfig model;
  int64_t batch = 0, seq_len = 0;
};

// Reads argv[1..7]; std::stoll throws std::invalid_argument on a non-number.
inline BenchShape parse_bench_shape(char** argv) {
  auto arg = [&](int i) { return std::stoll(argv[i]); };
  BenchShape s;
  s.model.vocab_size = arg(1), s.model.d_model = arg(2), s.model.n_layers = arg(3), s.model.n_heads = arg(4);
  s.model.mlp.d_ff = arg(5);
  s.batch = arg(6), s.seq_len = arg(7);
  s.model.max_seq_len = s.seq_len;
  return s;
}

}  // namespace ember::bench
