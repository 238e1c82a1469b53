#include "ember/model/mlp_chain.h"

#include "ember/model/autocast.h"
#include "ember/model/nonfinite_trace.h"

#include <optional>
#include <tuple>

namespace ember {

MlpChain::MlpChain(torch::nn::Module& owner, const FeedForwardContext& ctx, const std::vector<int64_t>& widths) {
  for (size_t l = 0; l < widths.size(); ++l) {
    const std::string suffix = l == 0 ? "" : "_" + std::to_string(l);  // one MLP keeps the plain names
    norms_.push_back(owner.register_module("mlp_norm" + suffix, std::make_shared<RMSNorm>(ctx.d_model, ctx.norm_eps)));
    mlps_.push_back(owner.register_module(
        "mlp" + suffix, std::make_shared<SwiGLU>(ctx.d_model, widths[l], ctx.init_std, ctx.out_std)));
  }
}

at::Tensor MlpChain::forward(const at::Tensor& x, const at::Tensor& added, const ChainContext& context,
                             std::unique_ptr<ChainState>* state, at::Tensor* stream) {
  const auto [h, last] = forward_unadded(x, added, context, state, stream);
  return h + last;
}

// Each residual add is fused into the next norm's pass (RMSNorm::add_forward); the last is left to
// the caller's.
std::pair<at::Tensor, at::Tensor> MlpChain::forward_unadded(const at::Tensor& x, const at::Tensor& added,
                                                            const ChainContext& context,
                                                            std::unique_ptr<ChainState>* state, at::Tensor* stream) {
  if (state && !*state && context.defined()) *state = make_state();
  ChainState* decoding = state ? state->get() : nullptr;
  std::optional<at::ScalarType> low;
  if (levels_read_through_projections() && autocast_enabled(x.device())) low = autocast_dtype(x.device());
  at::Tensor h = x, pending = added;
  for (size_t l = 0; l < mlps_.size(); ++l) {
    TraceScope scope(mlps_.size() == 1 ? "mlp" : "mlps", mlps_.size() == 1 ? -1 : static_cast<int64_t>(l));
    at::Tensor u;
    if (pending.defined())
      std::tie(h, u) = norms_[l]->add_forward(h, pending, low);
    else
      u = norms_[l]->forward(h);
    if (l == 0 && stream) *stream = h;
    pending = level(l, u, h, context, decoding);
  }
  return {h, pending};
}

at::Tensor MlpChain::level(size_t l, const at::Tensor& u, const at::Tensor&, const ChainContext&, ChainState*) {
  return mlps_[l]->forward(u);
}

double MlpChain::activation_bytes_per_token(int64_t elem) const {
  double bytes = 0;
  for (const auto& mlp : mlps_)
    bytes += rmsnorm_activation_bytes_per_token(mlp->w_down().size(0), elem) + mlp->activation_bytes_per_token(elem);
  return bytes;
}

int64_t MlpChain::width() const {
  int64_t width = 0;
  for (const auto& mlp : mlps_) width += mlp->d_ff();
  return width;
}

}  // namespace ember
