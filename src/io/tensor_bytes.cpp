#include "ember/io/tensor_bytes.h"

#include <algorithm>

namespace ember {

std::optional<size_t> tensor_bytes(const std::vector<int64_t>& shape, size_t element_size) {
  int64_t bytes = static_cast<int64_t>(element_size), span = bytes;
  for (int64_t n : shape) {
    if (n < 0 || __builtin_mul_overflow(bytes, n, &bytes) || __builtin_mul_overflow(span, std::max<int64_t>(n, 1), &span))
      return std::nullopt;
  }
  return static_cast<size_t>(bytes);
}

}  // namespace ember
