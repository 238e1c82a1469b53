#include "ember/kernels/kernel_choice.h"

#include <ATen/ATen.h>

#include <atomic>

namespace ember::kernels {
namespace {

std::array<std::atomic<Path>, kAllOps.size()>& paths() {
  static std::array<std::atomic<Path>, kAllOps.size()> p{};  // value-initialised: Path::automatic
  return p;
}

std::atomic<Path>& slot(Op op) { return paths()[static_cast<size_t>(op)]; }

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::loss_head: return "loss_head";
    case Op::norm: return "norm";
    case Op::swiglu: return "swiglu";
    case Op::rope: return "rope";
    case Op::projections: return "projections";
    case Op::lev: return "lev";
  }
  return "?";
}

Choices installed() {
  Choices c;
  for (Op op : kAllOps) c[op] = slot(op).load();
  return c;
}

Choices install(const Choices& next) {
  Choices was;
  for (Op op : kAllOps) was[op] = slot(op).exchange(next[op]);
  return was;
}

Path path(Op op) { return slot(op).load(std::memory_order_relaxed); }

bool use_fused(Op op, const at::Device& device) {
  switch (path(op)) {
    case Path::fused: return true;
    case Path::aten: return false;
    case Path::automatic: return op != Op::projections || device.is_cuda();  // stacking measured slower on CPUs
  }
  return true;
}

namespace testing {
namespace {
std::array<std::atomic<double>, kAllOps.size()>& faults() {
  static std::array<std::atomic<double>, kAllOps.size()> f{};
  return f;
}
}  // namespace

void inject_fault(Op op, double relative_error) { faults()[static_cast<size_t>(op)].store(relative_error); }
double injected_fault(Op op) { return faults()[static_cast<size_t>(op)].load(std::memory_order_relaxed); }
void apply_fault(Op op, const at::Tensor& out) {
  if (const double f = injected_fault(op); f != 0.0) {
    const at::NoGradGuard no_grad;
    out.mul_(1.0 + f);
  }
}
}  // namespace testing

ScopedPath::ScopedPath(Op op, Path path) : op_(op), was_(slot(op).exchange(path)) {}
ScopedPath::~ScopedPath() { slot(op_).store(was_); }

}  // namespace ember::kernels
