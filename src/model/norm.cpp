#include "ember/model/norm.h"
#include "ember/model/init.h"

namespace ember {

RMSNorm::RMSNorm(int64_t dim, double eps) : eps_(eps) { weight_ = register_parameter("weight", ones_parameter({dim})); }

at::Tensor RMSNorm::forward(const at::Tensor& x) { return at::rms_norm(x, {x.size(-1)}, weight_, eps_); }

at::Tensor RMSNorm::reference(const at::Tensor& x) {
  auto xf = x.to(at::kDouble);
  auto y = xf * at::rsqrt(xf.pow(2).mean(-1, true) + eps_) * weight_.to(at::kDouble);
  return y.to(x.scalar_type());
}

}  // namespace ember
