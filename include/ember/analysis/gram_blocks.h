// The Gram matrix X X^T of the rows of X, streamed one block pair at a time so that memory stays
// at one block x block matrix however many rows there are (docs/capacity.md: "never hold V x V").
#pragma once
#include <ATen/ATen.h>

#include <functional>

namespace ember {

struct GramBlock {
  int64_t row0 = 0, col0 = 0;  // offsets of the block in the full Gram matrix
  bool diagonal = false;       // row0 == col0: only the strict upper triangle holds new pairs
  at::Tensor values;           // X[row0:row0+b] X[col0:col0+b]^T, X's dtype and device
};

// Calls fn for every block pair I <= J, in row-major order. `values` lives in one buffer that
// the next block overwrites: copy what must outlive the call.
void for_each_gram_block(const at::Tensor& rows, int64_t block, const std::function<void(const GramBlock&)>& fn);

// Unordered pairs i < j among n rows.
inline int64_t pairs_of(int64_t n) { return n * (n - 1) / 2; }

}  // namespace ember
