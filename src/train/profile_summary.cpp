#include "ember/train/profile_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_map>

namespace ember {
namespace {

bool has_any(const std::string& s, std::initializer_list<const char*> parts) {
  return std::any_of(parts.begin(), parts.end(), [&](const char* p) { return s.find(p) != std::string::npos; });
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool is_cpu_matmul(std::string name) {  // in place or not: aten::addmm_ is a GEMM as aten::addmm is
  if (name.ends_with('_')) name.pop_back();
  static const char* const ops[] = {"aten::mm",    "aten::addmm", "aten::bmm",  "aten::baddbmm", "aten::addbmm",
                                    "aten::_scaled_mm", "aten::addmv", "aten::mv", "aten::dot",
                                    "aten::_addmm_activation"};
  return std::any_of(std::begin(ops), std::end(ops), [&](const char* op) { return name == op; });
}

// The category a scope gives to everything inside it ("" for other events).
std::string scope_category(const std::string& name) {
  if (name == kLossHeadScope) return "loss head";
  if (name == kOptimizerScope) return "optimizer";
  if (name == kCommunicationScope) return "communication";
  return "";
}

uint64_t event_ns(const ProfiledEvent& e) { return e.end_ns > e.start_ns ? e.end_ns - e.start_ns : 0; }

// Total length of the union of the intervals.
uint64_t covered_ns(std::vector<std::pair<uint64_t, uint64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  uint64_t total = 0, end = 0;
  for (const auto& [a, b] : spans) {
    const uint64_t from = std::max(a, end);
    if (b > from) total += b - from;
    end = std::max(end, b);
  }
  return total;
}

struct CpuNode {
  size_t event;
  uint64_t child_ns = 0;
  bool computing_child = false;  // an op below it that computes (it then only dispatches)
  std::string scope;
  bool in_op = false;  // inside an ATen op's own implementation (aten::item, the read itself, aside)
};

bool is_aten(const std::string& name) { return name.rfind("aten::", 0) == 0; }

// Whether an innermost op does work a GPU would launch a kernel for: ATen's and ember's own
// (kernels/<op>.cpp) ops, less the ones that only make a view or allocate (aten::to with nothing
// to convert included).
bool computes(const std::string& name) {
  static const std::set<std::string> metadata{
      "aten::empty",  "aten::empty_strided", "aten::empty_like", "aten::view",      "aten::_reshape_alias",
      "aten::reshape", "aten::_unsafe_view", "aten::as_strided", "aten::narrow",    "aten::slice",
      "aten::select", "aten::split",         "aten::split_with_sizes", "aten::chunk", "aten::unbind",
      "aten::transpose", "aten::t",          "aten::permute",    "aten::expand",    "aten::expand_as",
      "aten::unsqueeze", "aten::squeeze",    "aten::detach",     "aten::alias",     "aten::view_as",
      "aten::flatten", "aten::unflatten",    "aten::to",         "aten::contiguous", "aten::resize_",
      "aten::lift_fresh", "aten::result_type", "aten::is_same_size", "aten::set_"};
  return (is_aten(name) || name.rfind("ember::", 0) == 0) && !metadata.count(name);
}

// Self time of each CPU event, with the scope it ran in, from the nesting on its thread.
std::vector<CpuNode> nest_cpu_events(const std::vector<ProfiledEvent>& events) {
  std::vector<size_t> order;
  for (size_t i = 0; i < events.size(); ++i)
    if (!events[i].device) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto &x = events[a], &y = events[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.end_ns > y.end_ns;  // parents first
  });
  std::vector<CpuNode> nodes;
  std::vector<size_t> open;  // indices into nodes
  for (size_t i : order) {
    const auto& e = events[i];
    while (!open.empty()) {
      const auto& top = events[nodes[open.back()].event];
      if (top.thread == e.thread && top.start_ns <= e.start_ns && e.end_ns <= top.end_ns) break;
      open.pop_back();
    }
    CpuNode node{i, 0, false, scope_category(e.name)};
    if (!open.empty()) {
      auto& parent = nodes[open.back()];
      const auto& parent_name = events[parent.event].name;
      parent.child_ns += event_ns(e);
      parent.computing_child |= computes(e.name);
      if (node.scope.empty()) node.scope = parent.scope;
      node.in_op = parent.in_op || (is_aten(parent_name) && parent_name != "aten::item");
    }
    nodes.push_back(node);
    open.push_back(nodes.size() - 1);
  }
  return nodes;
}

}  // namespace

std::string categorize_op(const std::string& name, bool device) {
  const auto n = lowercase(name);
  if (has_any(n, {"nccl", "c10d", "gloo", "allreduce", "all_reduce", "reduce_scatter", "allgather"}))
    return "communication";
  if (has_any(n, {"scaled_dot_product", "flash", "efficient_attention", "fmha", "cudnn_attention"})) return "attention";
  if (device ? has_any(n, {"gemm", "cutlass", "xmma", "cublas", "nvjet", "gemv"}) : is_cpu_matmul(name))
    return "matmul";
  if (has_any(n, {"adam", "multi_tensor_apply"})) return "optimizer";
  if (device || is_aten(name) || n.rfind("ember::", 0) == 0) return "element-wise/norm";
  return "framework";  // autograd's bookkeeping, user scopes, runtime calls: host work outside the ops
}

bool is_host_sync(const std::string& name) {
  return name == "aten::_local_scalar_dense" || name == "cudaStreamSynchronize" || name == "cudaDeviceSynchronize" ||
         name == "cudaEventSynchronize";
}

ProfileSummary summarize_profile(const std::vector<ProfiledEvent>& events, int64_t steps, size_t top) {
  ProfileSummary s;
  s.steps = std::max<int64_t>(steps, 1);
  for (const auto& c : profile_categories()) s.seconds[c] = 0.0;
  if (events.empty()) return s;
  uint64_t first = UINT64_MAX, last = 0;
  for (const auto& e : events) first = std::min(first, e.start_ns), last = std::max(last, e.end_ns);
  s.window_s = (last - first) * 1e-9;
  s.device = std::any_of(events.begin(), events.end(), [](const ProfiledEvent& e) { return e.device; });

  const auto nodes = nest_cpu_events(events);
  std::unordered_map<uint64_t, std::string> launch_scope;  // a CPU launch's id -> the scope it ran in
  std::map<std::string, double> self_by_op;
  int64_t syncs = 0, ops = 0;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& node : nodes) {
    const auto& e = events[node.event];
    // A CPU kernel reading a scalar argument (the fused AdamW's found_inf on a CPU) waits for
    // nothing; a read by ember's own code would wait for a GPU, and a GPU op's own waits show as
    // the runtime's synchronisation calls.
    if (is_host_sync(e.name) && !(node.in_op && e.name == "aten::_local_scalar_dense")) ++syncs;
    if (e.correlation) launch_scope[e.correlation] = node.scope;
    if (s.device) continue;
    const double self = (event_ns(e) - std::min(event_ns(e), node.child_ns)) * 1e-9;
    s.seconds[node.scope.empty() ? categorize_op(e.name, false) : node.scope] += self;
    self_by_op[e.name] += self;
    if (computes(e.name) && !node.computing_child) ++ops;
    spans.emplace_back(e.start_ns, e.end_ns);
  }
  for (const auto& e : events) {
    if (!e.device) continue;
    const auto it = launch_scope.find(e.correlation);
    const bool scoped = it != launch_scope.end() && !it->second.empty();
    s.seconds[scoped ? it->second : categorize_op(e.name, true)] += event_ns(e) * 1e-9;
    self_by_op[e.name] += event_ns(e) * 1e-9;
    ++ops;
    spans.emplace_back(e.start_ns, e.end_ns);
  }
  s.seconds["idle"] = (last - first - std::min(last - first, covered_ns(spans))) * 1e-9;
  s.host_syncs_per_step = static_cast<double>(syncs) / s.steps;
  s.ops_per_step = static_cast<double>(ops) / s.steps;
  s.top_ops.assign(self_by_op.begin(), self_by_op.end());
  std::sort(s.top_ops.begin(), s.top_ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (s.top_ops.size() > top) s.top_ops.resize(top);
  return s;
}

nlohmann::json ProfileSummary::to_json() const {
  nlohmann::json categories = nlohmann::json::object();
  for (const auto& c : profile_categories()) categories[c] = seconds.at(c) / steps;
  nlohmann::json top = nlohmann::json::array();
  for (const auto& [name, sec] : top_ops) top.push_back({{"name", name}, {"seconds_per_step", sec / steps}});
  return {{"steps", steps},
          {"time_of", device ? "device" : "cpu"},
          {"window_seconds_per_step", window_s / steps},
          {"seconds_per_step", categories},
          {"host_syncs_per_step", host_syncs_per_step},
          {"ops_per_step", ops_per_step},
          {"top_ops", top}};
}

std::string ProfileSummary::table() const {
  double total = 0.0;
  for (const auto& c : profile_categories()) total += seconds.at(c);
  std::string out = fmt::format("  {} step(s), {:.2f} ms per step ({} time), {:.1f} host syncs and {:.0f} {} per step\n",
                                steps, 1e3 * window_s / steps, device ? "device" : "CPU", host_syncs_per_step,
                                ops_per_step, device ? "kernels" : "ops");
  for (const auto& c : profile_categories())
    out += fmt::format("  {:<18} {:>9.2f} ms/step {:>6.1f}%\n", c, 1e3 * seconds.at(c) / steps,
                       total > 0 ? 100.0 * seconds.at(c) / total : 0.0);
  return out;
}

}  // namespace ember
