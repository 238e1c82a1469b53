#include "ember/model/nonfinite_trace.h"

#include <ATen/record_function.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <mutex>

#include "ember/util/error.h"

namespace ember {
namespace {

std::atomic<bool> g_active{false};
std::mutex g_mutex;
std::optional<NonfiniteFinding> g_first;  // guarded by g_mutex

// What runs on this thread, outermost first: model scopes (no tensors) and the ops being run,
// with their floating-point inputs (ATen hands a callback the inputs at the op's start only).
struct Frame {
  std::string name;
  std::vector<at::Tensor> inputs;
};
thread_local std::vector<Frame> t_frames;
thread_local bool t_checking = false;  // the checks' own ops are not observed

bool floating(const at::Tensor& t) {
  return t.defined() && t.layout() == at::kStrided && !t.is_meta() &&
         (at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type()));
}

std::vector<at::Tensor> tensors_of(const c10::IValue& v) {
  if (v.isTensor()) return {v.toTensor()};
  if (v.isTensorList()) return v.toTensorVector();
  return {};
}

bool found_already() {
  std::lock_guard lock(g_mutex);
  return g_first.has_value();
}

bool is_op(const std::string& name) { return name.rfind("aten::", 0) == 0; }

// Only what an op hands back to its caller is checked: an op called inside another one can see
// the outer op's output buffer before it is written, and factories of uninitialised memory hand
// back whatever the allocator held.
bool checked(const Frame& op) {
  if (!t_frames.empty() && is_op(t_frames.back().name)) return false;
  for (const char* raw : {"aten::empty", "aten::new_empty", "aten::resize", "aten::set_"})
    if (op.name.rfind(raw, 0) == 0) return false;
  return true;
}

// Profiler annotations (RECORD_USER_SCOPE, util/profile_scopes.h) are neither ops nor model scopes.
bool annotation(const at::RecordFunction& fn) { return fn.scope() == at::RecordScope::USER_SCOPE; }

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (t_checking || annotation(fn)) return nullptr;
  Frame frame{fn.name(), {}};
  const bool nested = !t_frames.empty() && is_op(t_frames.back().name);
  if (!nested && !found_already())
    for (const auto& in : fn.inputs())
      for (auto& t : tensors_of(in))
        if (floating(t)) frame.inputs.push_back(std::move(t));
  t_frames.push_back(std::move(frame));
  return nullptr;
}

void record(const Frame& op, int64_t output, const TensorSummary& value) {
  NonfiniteFinding f;
  for (const auto& frame : t_frames) f.scopes.push_back(frame.name);
  f.op = op.name, f.output = output, f.value = value;
  for (const auto& t : op.inputs) f.inputs.push_back(summarize(t));
  std::lock_guard lock(g_mutex);
  if (!g_first) g_first = std::move(f);
}

void check_outputs(const at::RecordFunction& fn, const Frame& op) {
  const auto& outputs = fn.outputs();
  for (size_t i = 0; i < outputs.size(); ++i)
    for (const auto& t : tensors_of(outputs[i]))
      if (floating(t) && !at::isfinite(t).all().item<bool>()) return record(op, static_cast<int64_t>(i), summarize(t));
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  if (t_checking || t_frames.empty() || annotation(fn)) return;
  const Frame op = std::move(t_frames.back());
  t_frames.pop_back();
  if (!checked(op) || found_already()) return;
  t_checking = true;
  try {
    check_outputs(fn, op);
  } catch (...) {  // a callback must not throw into the op; a tensor we cannot check is skipped
  }
  t_checking = false;
}

}  // namespace

TensorSummary summarize(const at::Tensor& t) {
  TensorSummary s;
  s.shape = t.sizes().vec();
  s.dtype = std::string(c10::toString(t.scalar_type()));
  if (!floating(t) || t.numel() == 0) return s;
  at::NoGradGuard no_grad;
  auto x = t.detach();
  if (x.is_complex()) x = at::view_as_real(x);
  s.nan = at::isnan(x).sum().item<int64_t>();
  s.inf = at::isinf(x).sum().item<int64_t>();
  s.max_abs = at::where(at::isfinite(x), x.abs(), at::zeros_like(x)).max().item<double>();
  return s;
}

std::string describe(const TensorSummary& s) {
  return fmt::format("[{}] {}: {} NaN, {} inf, finite max |x| {:.3g}", fmt::join(s.shape, ", "), s.dtype, s.nan, s.inf,
                     s.max_abs);
}

std::string NonfiniteFinding::where() const {
  auto all = scopes;
  all.push_back(op);
  return fmt::format("{}", fmt::join(all, " > "));
}

NonfiniteTrace::NonfiniteTrace() {
  if (g_active.exchange(true)) throw Error("a NonfiniteTrace is already active");
  {
    std::lock_guard lock(g_mutex);
    g_first.reset();
  }
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit).needsInputs(true).needsOutputs(true));
}

NonfiniteTrace::~NonfiniteTrace() {
  at::removeCallback(handle_);
  g_active = false;
}

std::optional<NonfiniteFinding> NonfiniteTrace::first() const {
  std::lock_guard lock(g_mutex);
  return g_first;
}

TraceScope::TraceScope(const char* name, int64_t index) : active_(g_active.load(std::memory_order_relaxed)) {
  if (active_) t_frames.push_back({index < 0 ? std::string(name) : fmt::format("{}.{}", name, index), {}});
}

TraceScope::~TraceScope() {
  if (active_ && !t_frames.empty()) t_frames.pop_back();
}

}  // namespace ember
