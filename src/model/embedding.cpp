#include "ember/model/embedding.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "ember/model/autocast.h"
#include "ember/util/error.h"

namespace ember {

void check_token_ids(const at::Tensor& ids, int64_t vocab, const std::string& what) {
  if (ids.numel() == 0 || ids.is_meta()) return;
  if (ids.is_cpu()) {  // read in place: host memory already, no ATen op and no sync to count
    const auto flat = ids.to(at::kLong).contiguous();
    const int64_t* first = flat.const_data_ptr<int64_t>();
    const auto [lo, hi] = std::minmax_element(first, first + flat.numel());
    const int64_t low = *lo, high = *hi;
    if (low < 0 || high >= vocab)
      throw IndexError(fmt::format("{}: token id {} is out of range: ids must be in [0, {}) (model.vocab_size)", what,
                                   low < 0 ? low : high, vocab));
    return;
  }
  at::_assert_async(at::logical_and(ids.ge(0), ids.lt(vocab)).all(),
                    fmt::format("{}: a token id is out of range [0, {}) (model.vocab_size)", what, vocab));
}

// The residual stream starts in fp32 under autocast whatever the kind: a lookup gives fp32 rows, but
// a kind that embeds through a matmul (albert, flat_mlp, factored_mlp) gives autocast's type, which
// would make every residual add a bf16 one and take the norms off their fused pass (kernels/rms_norm.h).
at::Tensor Embedding::forward(const at::Tensor& ids) {
  check_token_ids(ids, vocab_size(), "embedding");
  auto x = embed(ids);
  if (autocast_enabled(x.device()) && x.scalar_type() == autocast_dtype(x.device())) return x.to(at::kFloat);
  return x;
}

at::Tensor Embedding::materialize(int64_t chunk) {
  torch::NoGradGuard no_grad;
  const auto params = parameters();
  const auto device = params.empty() ? at::Device(at::kCPU) : params.front().device();
  std::vector<at::Tensor> parts;
  for (int64_t start = 0; start < vocab_size(); start += chunk) {
    auto ids = at::arange(start, std::min(start + chunk, vocab_size()), at::TensorOptions(at::kLong).device(device));
    parts.push_back(forward(ids.unsqueeze(0)).squeeze(0).to(at::kFloat));
  }
  return at::cat(parts, 0);
}

}  // namespace ember
