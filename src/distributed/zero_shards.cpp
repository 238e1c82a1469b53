#include "ember/distributed/zero_shards.h"

#include <algorithm>

namespace ember {

std::vector<int> assign_owners(const std::vector<int64_t>& numels, int world) {
  std::vector<int64_t> load(static_cast<size_t>(world), 0);
  std::vector<int> owners;
  for (int64_t n : numels) {
    const int r = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    owners.push_back(r);
    load[static_cast<size_t>(r)] += n;
  }
  return owners;
}

OwnedParameterSync::OwnedParameterSync(std::vector<at::Tensor> params, std::vector<int> owners, Communicator& comm)
    : params_(std::move(params)), owners_(std::move(owners)), comm_(comm) {
  for (int r = 0; r < comm_.world(); ++r) {
    int64_t n = 0;
    for (size_t k = 0; k < params_.size(); ++k)
      if (owners_[k] == r) n += params_[k].numel();
    flats_.push_back(n ? at::empty({n}, params_.front().options().requires_grad(false)) : at::Tensor());
  }
}

void OwnedParameterSync::sync() {
  at::NoGradGuard no_grad;
  for (int r = 0; r < comm_.world(); ++r) {
    if (!flats_[static_cast<size_t>(r)].defined()) continue;
    auto& flat = flats_[static_cast<size_t>(r)];
    int64_t offset = 0;
    auto each = [&](auto&& fn) {
      offset = 0;
      for (size_t k = 0; k < params_.size(); ++k)
        if (owners_[k] == r) fn(params_[k], flat.narrow(0, offset, params_[k].numel())), offset += params_[k].numel();
    };
    if (comm_.rank() == r) each([](const at::Tensor& p, at::Tensor slice) { slice.copy_(p.reshape({-1})); });
    comm_.broadcast({flat}, r);
    if (comm_.rank() != r) each([](const at::Tensor& p, const at::Tensor& slice) { p.detach().copy_(slice.view_as(p)); });
  }
}

}  // namespace ember
