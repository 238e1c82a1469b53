#include "ember/model/norm.h"

#include "ember/kernels/kernel_choice.h"
#include "ember/model/init.h"
#include "kernels/rms_norm.h"

namespace ember {

RMSNorm::RMSNorm(int64_t dim, double eps) : eps_(eps) { weight_ = register_parameter("weight", ones_parameter({dim})); }

at::Tensor RMSNorm::forward(const at::Tensor& x) { return rms_norm::norm(x, weight_, eps_); }

std::pair<at::Tensor, at::Tensor> RMSNorm::add_forward(const at::Tensor& x, const at::Tensor& m,
                                                       std::optional<at::ScalarType> y_type) {
  return rms_norm::add_norm(x, m, weight_, eps_, y_type.value_or(x.scalar_type()));
}

int64_t RMSNorm::saved_bytes_per_token() const {
  return rms_norm::saved_bytes_per_row(weight_.size(0), 4, kernels::path(kernels::Op::norm) != kernels::Path::aten);
}

at::Tensor RMSNorm::reference(const at::Tensor& x) {
  auto xf = x.to(at::kDouble);
  auto y = xf * at::rsqrt(xf.pow(2).mean(-1, true) + eps_) * weight_.to(at::kDouble);
  return y.to(x.scalar_type());
}

}  // namespace ember
