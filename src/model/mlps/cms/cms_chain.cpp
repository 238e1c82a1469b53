#include "ember/model/mlps/cms/cms_chain.h"

#include <algorithm>

#include "ember/model/mlps/cms/cms_config.h"
#include "ember/util/error.h"

namespace ember {

CmsChain::CmsChain(torch::nn::Module& owner, const FeedForwardContext& ctx, const std::vector<int64_t>& widths,
                   std::vector<LevelUpdate> updates)
    : MlpChain(owner, ctx, widths), updates_(std::move(updates)) {
  if (!updates_.empty() && updates_.size() != mlps_.size())
    throw ConfigError(ctx.path + ": " + std::to_string(updates_.size()) +
                      " level update rules for " + std::to_string(mlps_.size()) + " MLP levels");
}

TeachNeeds CmsChain::teach_needs() const {
  TeachNeeds needs;
  for (const auto& u : updates_) {
    if (!u.learns()) continue;
    if (u.signal == TeachSource::two_pass) needs.first_pass = true;
    if (u.signal == TeachSource::lens) ++needs.stream_reads;
  }
  return needs;
}

at::Tensor CmsChain::level(size_t l, const at::Tensor& u, const at::Tensor& x, const ChainContext& context,
                           ChainState* state) {
  if (!context.teach.defined() || updates_.empty() || !updates_[l].learns()) return mlps_[l]->forward(u);
  if (!state) return fast_swiglu_forward(*mlps_[l], u, x, context.teach, updates_[l]);
  return fast_swiglu_decode(*mlps_[l], u, x, context.teach, updates_[l],
                            static_cast<CmsChainState&>(*state).levels[l]);
}

InputPrecision CmsChain::levels_input_precision() const {
  const bool learns = std::any_of(updates_.begin(), updates_.end(), [](const LevelUpdate& u) { return u.learns(); });
  return learns ? InputPrecision::stream : InputPrecision::matmul;
}

std::unique_ptr<ChainState> CmsChain::make_state() const {
  auto state = std::make_unique<CmsChainState>();
  state->levels.resize(mlps_.size());
  return state;
}

double CmsChain::in_context_flops_per_token() const {
  double flops = 0;
  for (size_t l = 0; l < updates_.size(); ++l)
    if (updates_[l].learns())
      flops += 8.0 * static_cast<double>(mlps_[l]->w_up().numel()) * (updates_[l].differentiate ? 3.0 : 1.0);
  return flops;
}

double CmsChain::activation_bytes_per_token(int64_t elem) const {
  double bytes = MlpChain::activation_bytes_per_token(elem);
  for (size_t l = 0; l < updates_.size(); ++l)
    if (updates_[l].learns())
      bytes += 3.0 * static_cast<double>(mlps_[l]->w_up().numel()) * (4.0 + (elem < 4 ? elem : 0)) /
               static_cast<double>(updates_[l].chunk);
  return bytes;
}

std::vector<int64_t> cms_widths(const FeedForwardContext& ctx, int64_t d_ff) {
  return cms_level_widths(d_ff, ctx.config.get<CmsConfig>().levels, ctx.path);
}

std::unique_ptr<MlpChain> make_cms_chain(torch::nn::Module& owner, const FeedForwardContext& ctx,
                                         const std::vector<int64_t>& widths) {
  return std::make_unique<CmsChain>(owner, ctx, widths, ctx.config.get<CmsConfig>().level_updates());
}

}  // namespace ember
