// Where a forward or backward pass first produced a non-finite value (train.debug_nonfinite,
// docs/config.md). While a NonfiniteTrace lives, every ATen op and autograd node is observed
// through ATen's RecordFunction callbacks: the first op whose output holds a NaN or an infinity
// is recorded with the scopes it ran in. The model names its parts with TraceScope ("layers.2",
// "mixer", "memory"), so a finding reads "layers.2 > mixer > memory > aten::baddbmm". A
// TraceScope costs one check of a global flag when no trace is active.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ember {

struct TensorSummary {
  std::vector<int64_t> shape;
  std::string dtype;
  int64_t nan = 0, inf = 0;  // non-finite elements
  double max_abs = 0.0;      // over the finite elements
  bool finite() const { return nan == 0 && inf == 0; }
};
TensorSummary summarize(const at::Tensor& t);
std::string describe(const TensorSummary& s);  // "[4, 16] float: 3 NaN, 0 inf, finite max |x| 2.1e+38"

struct NonfiniteFinding {
  std::vector<std::string> scopes;  // outermost first; model scopes and enclosing ops / autograd nodes
  std::string op;                   // the op whose output went non-finite, e.g. "aten::exp"
  int64_t output = 0;               // which of its outputs
  TensorSummary value;
  std::vector<TensorSummary> inputs;  // its tensor inputs
  std::string where() const;          // scopes and op joined by " > "
};

class NonfiniteTrace {
 public:
  NonfiniteTrace();  // one at a time per process
  ~NonfiniteTrace();
  NonfiniteTrace(const NonfiniteTrace&) = delete;
  NonfiniteTrace& operator=(const NonfiniteTrace&) = delete;
  std::optional<NonfiniteFinding> first() const;  // none yet: every observed output was finite

 private:
  uint64_t handle_;
};

// Names a part of the model for the duration of the scope (only while a trace is active):
// `name`, or "name.index" for an index >= 0 ("layers.2").
class TraceScope {
 public:
  explicit TraceScope(const char* name, int64_t index = -1);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  bool active_;
};

}  // namespace ember
