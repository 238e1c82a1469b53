#include "ember/model/residual_stream.h"

namespace ember {

ResidualStream::ResidualStream(at::Tensor x, at::Tensor pending) : x_(std::move(x)), m_(std::move(pending)) {}

at::Tensor ResidualStream::normed(RMSNorm& norm, std::optional<at::ScalarType> y_type) {
  if (m_.defined()) {
    auto [h, y] = norm.add_forward(x_, m_, y_type);
    x_ = std::move(h);
    m_ = at::Tensor();
    return y;
  }
  return norm.forward(x_);
}

void ResidualStream::add(at::Tensor m) {
  if (m_.defined()) x_ = x_ + m_;
  m_ = std::move(m);
}

at::Tensor ResidualStream::sum() const { return m_.defined() ? x_ + m_ : x_; }

std::vector<at::Tensor> ResidualStream::tensors() const {
  return m_.defined() ? std::vector<at::Tensor>{x_, m_} : std::vector<at::Tensor>{x_};
}

ResidualStream ResidualStream::of(const std::vector<at::Tensor>& tensors) {
  TORCH_CHECK(!tensors.empty() && tensors.size() <= 2,
              "ResidualStream::of: the stream and at most one pending addition, not ", tensors.size(), " tensors");
  return ResidualStream(tensors[0], tensors.size() > 1 ? tensors[1] : at::Tensor());
}

}  // namespace ember
