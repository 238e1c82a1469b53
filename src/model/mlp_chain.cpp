#include "ember/model/mlp_chain.h"

#include "ember/model/autocast.h"
#include "ember/model/nonfinite_trace.h"

#include <optional>

namespace ember {

MlpChain::MlpChain(torch::nn::Module& owner, const FeedForwardContext& ctx, const std::vector<int64_t>& widths) {
  for (size_t l = 0; l < widths.size(); ++l) {
    const std::string suffix = l == 0 ? "" : "_" + std::to_string(l);  // one MLP keeps the plain names
    norms_.push_back(owner.register_module("mlp_norm" + suffix, std::make_shared<RMSNorm>(ctx.d_model, ctx.norm_eps)));
    mlps_.push_back(owner.register_module(
        "mlp" + suffix, std::make_shared<SwiGLU>(ctx.d_model, widths[l], ctx.init_std, ctx.out_std)));
  }
}

void MlpChain::forward(ResidualStream& stream, const ChainContext& context, std::unique_ptr<ChainState>* state) {
  if (state && !*state && context.defined()) *state = make_state();
  ChainState* decoding = state ? state->get() : nullptr;
  const auto low = normed_dtype(levels_input_precision(), stream.stream().device());
  for (size_t l = 0; l < mlps_.size(); ++l) {
    TraceScope scope(mlps_.size() == 1 ? "mlp" : "mlps", mlps_.size() == 1 ? -1 : static_cast<int64_t>(l));
    const auto u = stream.normed(*norms_[l], low);
    stream.add(level(l, u, stream.stream(), context, decoding));
  }
}

at::Tensor MlpChain::level(size_t l, const at::Tensor& u, const at::Tensor&, const ChainContext&, ChainState*) {
  return mlps_[l]->forward(u);
}

double MlpChain::activation_bytes_per_token(int64_t elem) const {
  double bytes = 0;
  const int64_t input_elem = levels_input_precision() == InputPrecision::matmul ? elem : 4;
  for (size_t l = 0; l < mlps_.size(); ++l)
    bytes += static_cast<double>(norms_[l]->saved_bytes_per_token()) + mlps_[l]->activation_bytes_per_token(elem, input_elem);
  return bytes;
}

int64_t MlpChain::width() const {
  int64_t width = 0;
  for (const auto& mlp : mlps_) width += mlp->d_ff();
  return width;
}

}  // namespace ember
