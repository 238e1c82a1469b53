// Checks autograd's gradient of a scalar loss against central differences, at the first, middle
// and last element of each named parameter (float64 modules; relative tolerance 1e-6).
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace ember::testing {

inline void expect_gradients_match_central_differences(torch::nn::Module& module,
                                                       const std::function<at::Tensor()>& loss_of,
                                                       const std::vector<std::string>& names) {
  auto params = module.named_parameters();
  module.zero_grad();
  loss_of().backward();
  for (const auto& name : names) {
    auto p = params[name];
    auto flat = p.detach().view(-1);
    for (int64_t i : {int64_t{0}, p.numel() / 2, p.numel() - 1}) {
      const double eps = 1e-6, saved = flat[i].item<double>();
      torch::NoGradGuard no_grad;
      flat[i].fill_(saved + eps);
      const double up = loss_of().item<double>();
      flat[i].fill_(saved - eps);
      const double down = loss_of().item<double>();
      flat[i].fill_(saved);
      const double numeric = (up - down) / (2 * eps), analytic = p.grad().view(-1)[i].item<double>();
      EXPECT_NEAR(analytic, numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << name << "[" << i << "]";
    }
  }
}

}  // namespace ember::testing
