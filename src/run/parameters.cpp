#include "ember/run/parameters.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ember/util/error.h"

namespace ember {
namespace {

std::string shape_text(const at::Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

}  // namespace

TensorMap module_tensors(const torch::nn::Module& module) {
  TensorMap out;
  for (const auto& p : module.named_parameters()) out[p.key()] = p.value();
  for (const auto& b : module.named_buffers()) out[b.key()] = b.value();
  return out;
}

void load_parameters(torch::nn::Module& module, const TensorMap& tensors, const std::string& where) {
  TensorMap targets = module_tensors(module);
  for (const auto& [name, t] : tensors)
    if (!targets.count(name))
      throw CheckpointError(
          fmt::format("{}: '{}' is not a parameter of this model (a different model config?)", where, name));
  at::NoGradGuard no_grad;
  for (auto& [name, target] : targets) {
    auto it = tensors.find(name);
    if (it == tensors.end()) throw CheckpointError(fmt::format("{}: the model's '{}' is missing", where, name));
    const at::Tensor& saved = it->second;
    if (saved.sizes() != target.sizes())
      throw CheckpointError(fmt::format("{}: '{}' has shape {}, the model expects {}", where, name, shape_text(saved),
                                        shape_text(target)));
    if (saved.scalar_type() != target.scalar_type())
      throw CheckpointError(fmt::format("{}: '{}' is {}, the model expects {}", where, name,
                                        c10::toString(saved.scalar_type()), c10::toString(target.scalar_type())));
    target.copy_(saved);
  }
}

}  // namespace ember
