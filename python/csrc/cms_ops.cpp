// ember::cms_level: one level of the cms feed-forward (Hope's Continuum Memory System) learning in
// context (model/mlps/cms/fast_swiglu.h): a SwiGLU whose weights take a step on the teach signal
// after every `chunk` tokens, as a PyTorch operator built from ATen ops (autograd flows through the
// updates when `differentiate`, else they are constants to it, as in ember's trainer).
#include <torch/library.h>

#include "ember/model/mlps/cms/fast_swiglu.h"

namespace ember::ops {
namespace {

at::Tensor cms_level(const at::Tensor& u, const at::Tensor& teach, const at::Tensor& w_gate, const at::Tensor& w_up,
                     const at::Tensor& w_down, int64_t chunk, double lr, bool differentiate, double grad_clip) {
  TORCH_CHECK(u.dim() == 3, "ember.cms_level: u must be [B, T, d], got ", u.sizes());
  const int64_t d = u.size(2);
  TORCH_CHECK(w_gate.dim() == 2 && w_gate.size(1) == d && w_up.sizes() == w_gate.sizes() && w_down.dim() == 2 &&
                  w_down.size(0) == d && w_down.size(1) == w_gate.size(0),
              "ember.cms_level: w_gate, w_up must be [F, d] and w_down [d, F] for d = ", d, ", got ", w_gate.sizes(),
              w_up.sizes(), w_down.sizes());
  TORCH_CHECK(chunk >= 0, "ember.cms_level: chunk must be >= 0 (0: a static level), got ", chunk);
  const int64_t B = u.size(0);
  auto batch = [B](const at::Tensor& w) { return w.unsqueeze(0).expand({B, w.size(0), w.size(1)}); };
  LevelUpdate rule{chunk, lr, differentiate, TeachSource::two_pass, grad_clip};
  return fast_swiglu_two_pass({batch(w_gate), batch(w_up), batch(w_down)}, u, teach, rule);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ember, m) {
  m.def("cms_level(Tensor u, Tensor teach, Tensor w_gate, Tensor w_up, Tensor w_down, int chunk, float lr, "
        "bool differentiate=False, float grad_clip=0.) -> Tensor");
  m.impl("cms_level", c10::DispatchKey::CompositeImplicitAutograd, TORCH_FN(cms_level));
}

}  // namespace ember::ops
