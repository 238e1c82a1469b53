#include "ember/analysis/gram_blocks.h"

#include "ember/util/error.h"

namespace ember {

void for_each_gram_block(const at::Tensor& rows, int64_t block, const std::function<void(const GramBlock&)>& fn) {
  if (block < 1) throw UsageError("Gram blocks: block size must be positive, got " + std::to_string(block));
  const int64_t n = rows.size(0);
  at::Tensor buffer = at::empty({0}, rows.options());  // resized in place: storage is reused
  for (int64_t i0 = 0; i0 < n; i0 += block) {
    const auto xi = rows.narrow(0, i0, std::min(block, n - i0));
    for (int64_t j0 = i0; j0 < n; j0 += block) {
      const auto xj = rows.narrow(0, j0, std::min(block, n - j0));
      buffer.resize_({0});  // keeps the storage; mm_out grows it only when a block is larger
      at::mm_out(buffer, xi, xj.t());
      fn(GramBlock{i0, j0, i0 == j0, buffer});
    }
  }
}

}  // namespace ember
