// The size of a tensor a file describes, checked before anything is allocated: a crafted shape
// must neither wrap around 2^64 (to match a small byte count) nor make LibTorch's stride
// computation overflow (a zero dimension beside huge ones holds 0 bytes but is still refused there).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ember {

// The bytes of a tensor of this shape, or nullopt for a negative dimension or a shape whose byte
// count or strides (every dimension counted at least once) pass 2^63.
std::optional<size_t> tensor_bytes(const std::vector<int64_t>& shape, size_t element_size);

}  // namespace ember
