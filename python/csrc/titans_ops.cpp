// ember::titans_memory: Titans' neural long-term memory (model/mixers/titans/neural_memory.h) over a
// sequence, chunk-parallel and exact, as a PyTorch operator built from ATen ops (autograd and
// torch.compile trace through them). It returns the outputs and the state after the last token
// instead of advancing a state in place; an empty w2 ([B, H, 0, d_h]) makes it the linear memory.
// ember::titans_memory_reference is the token-by-token oracle.
#include <torch/library.h>

#include "ember/model/mixers/titans/neural_memory.h"
#include "python/csrc/op_args.h"

namespace ember::ops {
namespace {

using MemoryOut = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;
using Scan = at::Tensor (*)(MemoryState&, const MemoryInputs&, const MemoryRule&);

template <Scan scan>
MemoryOut run(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& theta,
              const at::Tensor& eta, const at::Tensor& alpha, const at::Tensor& w1, const at::Tensor& w2,
              const at::Tensor& s1, const at::Tensor& s2, int64_t chunk, c10::string_view retrieval,
              double grad_clip, bool residual, c10::string_view step) {
  TORCH_CHECK(q.dim() == 4 && q.size(2) > 0, "ember.titans_memory: q, k, v must be [B, H, T, d_h] with T >= 1, got ",
              q.sizes());
  TORCH_CHECK(k.sizes() == q.sizes() && v.sizes() == q.sizes(), "ember.titans_memory: q ", q.sizes(), ", k ",
              k.sizes(), " and v ", v.sizes(), " differ");
  for (const auto* gate : {&theta, &eta, &alpha})
    TORCH_CHECK(gate->sizes() == q.sizes().slice(0, 3), "ember.titans_memory: theta, eta, alpha must be [B, H, T] = ",
                q.sizes().slice(0, 3), ", got ", gate->sizes());
  const bool linear = w2.dim() == 4 && w2.size(2) == 0;  // M(z) = [z +] z W, W in w1 [B, H, d_h, d_h]
  TORCH_CHECK(w1.dim() == 4 && w1.size(2) == q.size(3) && w2.size(3) == q.size(3) && s1.sizes() == w1.sizes() &&
                  s2.sizes() == w2.sizes() && (!linear || w1.size(3) == q.size(3)),
              "ember.titans_memory: w1, s1 must be [B, H, d_h, m] and w2, s2 [B, H, m, d_h] (a linear memory: w1, s1 "
              "[B, H, d_h, d_h] and w2, s2 [B, H, 0, d_h]), got ",
              w1.sizes(), s1.sizes(), w2.sizes(), s2.sizes());
  TORCH_CHECK(chunk > 0, "ember.titans_memory: chunk must be positive, got ", chunk);
  MemoryState state{w1, w2, s1, s2};
  auto y = scan(state, {q, k, v, theta, eta, alpha},
                {chunk, named<Retrieval>(std::string(retrieval), "retrieval"), grad_clip, residual,
                 named<InnerStep>(std::string(step), "step")});
  return {y, state.w1, state.w2, state.s1, state.s2};
}

// The oracle's wrapper: the same signature with the reference scan.
at::Tensor scan_reference(MemoryState& s, const MemoryInputs& in, const MemoryRule& rule) {
  return memory_scan_reference(s, in, rule);
}
at::Tensor scan_fast(MemoryState& s, const MemoryInputs& in, const MemoryRule& rule) { return memory_scan(s, in, rule); }

}  // namespace

TORCH_LIBRARY_FRAGMENT(ember, m) {
  const char* args =
      "(Tensor q, Tensor k, Tensor v, Tensor theta, Tensor eta, Tensor alpha, Tensor w1, Tensor w2, Tensor s1, "
      "Tensor s2, int chunk, str retrieval='after', float grad_clip=0., bool residual=True, str step='plain') -> "
      "(Tensor, Tensor, Tensor, Tensor, Tensor)";
  m.def(torch::schema(("titans_memory" + std::string(args)).c_str()));
  m.def(torch::schema(("titans_memory_reference" + std::string(args)).c_str()));
  m.impl("titans_memory", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(run<scan_fast>));
  m.impl("titans_memory_reference", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(run<scan_reference>));
}

}  // namespace ember::ops
