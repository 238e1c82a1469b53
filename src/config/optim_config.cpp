#include "ember/config/optim_config.h"

#include <fmt/format.h>

namespace ember {

void OptimConfig::check(const ConfigChecker& c) const {
  c.require(min_lr <= lr, "optim.min_lr", fmt::format("min_lr = {} must not exceed lr = {}", min_lr, lr));
  c.require(beta1 < 1.0, "optim.beta1", "expected a value in [0, 1)");
  c.require(beta2 < 1.0, "optim.beta2", "expected a value in [0, 1)");
}

}  // namespace ember
