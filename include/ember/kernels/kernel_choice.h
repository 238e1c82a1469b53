// Which path each of ember's fused ops takes: its own kernel ("fused") or ATen's ops ("aten").
// A run installs its choices once at start (the `kernels:` config section, resolved on the device
// by model/kernel_check.h); until then, and in programs that install none (the Python ops,
// benchmarks), every op takes its built-in default ("auto": fused wherever the kernel applies;
// the stacked projections on CUDA only). Each op still falls back on ATen for inputs its kernel
// does not take.
#pragma once
#include <ATen/core/TensorBody.h>

#include <array>
#include <span>

#include "ember/config/enum_names.h"

namespace ember::kernels {

enum class Op { loss_head, norm, swiglu, rope, projections, lev };
inline constexpr std::array<Op, 6> kAllOps = {Op::loss_head, Op::norm, Op::swiglu, Op::rope, Op::projections, Op::lev};
const char* op_name(Op op);  // the op's key in the `kernels:` section

enum class Path { automatic, fused, aten };
inline std::span<const EnumName<Path>> enum_names(Path) {
  static constexpr EnumName<Path> names[] = {{Path::automatic, "auto"}, {Path::fused, "fused"}, {Path::aten, "aten"}};
  return names;
}

// One path per op, indexed by Op.
struct Choices {
  std::array<Path, kAllOps.size()> path{};  // all automatic
  Path& operator[](Op op) { return path[static_cast<size_t>(op)]; }
  Path operator[](Op op) const { return path[static_cast<size_t>(op)]; }
  bool operator==(const Choices&) const = default;
};

Choices installed();                   // this process's choices
Choices install(const Choices& next);  // returns the previous choices
Path path(Op op);

// Whether `op` runs ember's kernel for inputs on `device` (the kernel may still refuse an input).
bool use_fused(Op op, const at::Device& device);

// Sets one op's path for a scope (tests, benchmarks, the on-device check).
class ScopedPath {
 public:
  ScopedPath(Op op, Path path);
  ~ScopedPath();
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  Op op_;
  Path was_;
};

// Test-only: `op`'s fused path scales its forward output by (1 + relative_error) while it is not
// 0, so that tests can show the check refusing a faulty kernel and a run training on ATen's ops.
namespace testing {
void inject_fault(Op op, double relative_error);
double injected_fault(Op op);
// out *= 1 + the fault injected into `op`, if any: one relaxed load when there is none.
void apply_fault(Op op, const at::Tensor& out);
}  // namespace testing

}  // namespace ember::kernels
