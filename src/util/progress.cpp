#include "ember/util/progress.h"

#include <cmath>

#include "ember/util/log.h"

namespace ember {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const int64_t t = static_cast<int64_t>(s);
  if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02d}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

ProgressMeter::ProgressMeter(std::string what, double total, double interval_s)
    : what_(std::move(what)),
      total_(total),
      interval_s_(interval_s),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

double ProgressMeter::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressMeter::update(double done, const std::string& detail) {
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_).count() < interval_s_) return;
  last_ = now;
  const double elapsed = elapsed_s();
  const double fraction = total_ > 0 ? done / total_ : 1.0;
  const double eta = fraction > 0 ? elapsed * (1.0 - fraction) / fraction : -1.0;
  log::info("{}: {:.1f}% | {} elapsed | ETA {}{}{}", what_, 100.0 * fraction, format_duration(elapsed),
            format_duration(eta), detail.empty() ? "" : " | ", detail);
}

}  // namespace ember
