// Progress with ETA on stderr for long work (exact capacity passes, packing sweeps): at most one
// line every `interval_s` seconds, and nothing at all for work that finishes before the first one.
#pragma once
#include <chrono>
#include <string>

namespace ember {

std::string format_duration(double seconds);  // "42s", "3m07s", "2h05m"; "?" when unknown

class ProgressMeter {
 public:
  // total: the amount of work in any unit (pairs, FLOPs, steps); done is reported in that unit.
  ProgressMeter(std::string what, double total, double interval_s = 5.0);
  // Logs "<what>: 41.3% | 12s elapsed | ETA 17s[ | detail]" when the interval has passed.
  void update(double done, const std::string& detail = "");
  double elapsed_s() const;

 private:
  std::string what_;
  double total_;
  double interval_s_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace ember
