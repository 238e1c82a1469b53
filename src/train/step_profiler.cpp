#include "ember/train/step_profiler.h"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>

#include <charconv>

#include "ember/train/profile_summary.h"
#include "ember/util/error.h"
#include "ember/util/files.h"
#include "ember/util/log.h"

namespace ember {
namespace {

namespace kineto = torch::autograd::profiler;
namespace prof = torch::profiler::impl;

int64_t parse_step(std::string_view text, const std::string& what, const std::string& whole) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1)
    throw UsageError(what + " '" + whole + "': expected FIRST:LAST or STEP, steps >= 1 (e.g. 20:23)");
  return v;
}

std::vector<ProfiledEvent> to_profiled_events(const kineto::ProfilerResult& result) {
  std::vector<ProfiledEvent> out;
  for (const auto& e : result.events()) {
    ProfiledEvent p;
    p.name = e.name();
    p.start_ns = e.startNs();
    p.end_ns = e.endNs();
    p.thread = e.startThreadId();
    p.device = e.deviceType() != c10::DeviceType::CPU;
    p.correlation = p.device ? e.linkedCorrelationId() : e.correlationId();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

ProfileSteps parse_profile_steps(const std::string& text, const std::string& what) {
  const auto colon = text.find(':');
  ProfileSteps s;
  s.first = parse_step(std::string_view(text).substr(0, colon), what, text);
  s.last = colon == std::string::npos ? s.first : parse_step(std::string_view(text).substr(colon + 1), what, text);
  if (s.last < s.first) throw UsageError(what + " '" + text + "': the last step comes before the first");
  return s;
}

StepProfiler::StepProfiler(ProfileSteps steps, std::filesystem::path out_dir, at::Device device)
    : steps_(steps), out_dir_(std::move(out_dir)), device_(device) {}

StepProfiler::~StepProfiler() {
  if (active_) (void)kineto::disableProfiler();
}

void StepProfiler::before_step(int64_t step) {
  if (!steps_.enabled() || active_ || finished_ || step != steps_.first) return;
  std::set<prof::ActivityType> activities{prof::ActivityType::CPU};
  if (device_.is_cuda()) {
    activities.insert(prof::ActivityType::CUDA);
    torch::cuda::synchronize();  // the window starts with an idle device
  }
  prof::ExperimentalConfig experimental;
  experimental.enable_cuda_sync_events = device_.is_cuda();  // the host's waits appear in the trace
  const prof::ProfilerConfig config(prof::ProfilerState::KINETO, false, false, false, false, false, experimental);
  kineto::prepareProfiler(config, activities);
  kineto::enableProfiler(config, activities);
  active_ = true;
}

void StepProfiler::after_step(int64_t step) {
  if (active_ && step >= steps_.last) finish();
}

void StepProfiler::finish() {
  if (device_.is_cuda()) torch::cuda::synchronize();  // every kernel of the window in the trace
  auto result = kineto::disableProfiler();
  active_ = false;
  finished_ = true;
  std::filesystem::create_directories(out_dir_);
  const auto trace = out_dir_ / "trace.json";
  result->save(trace.string());
  const auto summary = summarize_profile(to_profiled_events(*result), steps_.count());
  auto json = summary.to_json();
  json["first_step"] = steps_.first;
  json["last_step"] = steps_.last;
  json["device"] = device_.str();
  write_file_atomic(out_dir_ / "summary.json", json.dump(2) + "\n");
  log::info("profile of steps {}-{}: {} (chrome://tracing or ui.perfetto.dev) and {}\n{}", steps_.first,
            steps_.last, trace.string(), (out_dir_ / "summary.json").string(), summary.table());
}

}  // namespace ember
