// What a component config struct needs to describe its keys: value bounds and the checker used
// for cross-field rules. Each struct lists its keys once in `template <class V> void fields(V&)`;
// the same list drives YAML reading (with validation) and writing the resolved config.
#pragma once
#include <limits>
#include <string>

namespace ember {

struct Bound {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  const char* text = nullptr;  // e.g. "> 0"; null means unbounded

  static Bound positive() { return {0.0, std::numeric_limits<double>::infinity(), true, "> 0"}; }
  static Bound non_negative() { return {0.0, std::numeric_limits<double>::infinity(), false, ">= 0"}; }
  static Bound unit() { return {0.0, 1.0, false, "in [0, 1]"}; }
  static Bound unit_open() { return {0.0, 1.0, true, "in (0, 1]"}; }
  bool admits(double x) const { return (lo_open ? x > lo : x >= lo) && x <= hi; }
};

// Cross-field rules report through this: it names the file (or --set) that set the key.
class ConfigChecker {
 public:
  virtual ~ConfigChecker() = default;
  virtual void require(bool ok, const std::string& key_path, const std::string& what) const = 0;
  // The file (or --set) that set this key, for errors raised elsewhere.
  virtual std::string origin(const std::string& key_path) const = 0;
};

}  // namespace ember
