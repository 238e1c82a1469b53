// How a component config struct describes its keys: it lists them once in
// `void fields(FieldVisitor& v)`, and the same list drives reading YAML (with validation), writing
// the resolved config and anything else that walks the schema. Also: value bounds, and the
// checker used for cross-field rules.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ember/config/enum_names.h"
#include "ember/config/kind_sections.h"

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

class FieldVisitor {
 public:
  virtual ~FieldVisitor() = default;
  virtual void field(const char* key, int64_t& value, Bound b = {}) = 0;
  virtual void field(const char* key, double& value, Bound b = {}) = 0;
  virtual void field(const char* key, bool& value) = 0;
  virtual void field(const char* key, std::string& value) = 0;
  virtual void field(const char* key, std::vector<double>& value, Bound b = {}) = 0;
  virtual void field(const char* key, std::vector<std::string>& value) = 0;
  // An open set of names (e.g. the kinds of a registry).
  virtual void choice(const char* key, std::string& value, const std::vector<std::string>& options) = 0;
  // A closed set: an enum with enum_names().
  template <class E>
  requires std::is_enum_v<E>
  void choice(const char* key, E& value) {
    std::string spelled = enum_name(value);
    choice(key, spelled, enum_spellings<E>());
    enum_from_name(spelled, value);
  }
  template <class Section>
  void section(const char* key, Section& s) {
    section_with(key, [&s](FieldVisitor& sub) { s.fields(sub); });
  }
  // A seam's per-kind sections: readers take each one present; writers write those in `used`
  // (the selected kind's, and the sections of other kinds it reads, e.g. albert sized by lev's).
  virtual void kind_sections(KindSections& sections, const std::vector<std::string>& used) = 0;
  // A key that no longer exists here: readers reject it, naming where it went.
  virtual void moved(const char* old_key, const char* new_place) {}

 protected:
  virtual void section_with(const char* key, const std::function<void(FieldVisitor&)>& body) = 0;
};

}  // namespace ember
