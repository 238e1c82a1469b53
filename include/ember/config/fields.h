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
  // A key added after checkpoints were written, with the `legacy` value that does what the model
  // did before the key existed. The model hash leaves the key out at that value, so checkpoints
  // from before keep their hash and resume (run/run_config.h, model_hash); every other visitor
  // sees a plain field. A new key with a default needs this line and nothing else.
  template <class T, class... Extra>
  void added_field(const char* key, T& value, T legacy, Extra... extra) {
    if (!hashes_as_absent([&](FieldVisitor& v) { v.field(key, value, extra...); },
                          [&](FieldVisitor& v) { v.field(key, legacy, extra...); }))
      field(key, value, extra...);
  }
  template <class E>
  requires std::is_enum_v<E>
  void added_choice(const char* key, E& value, E legacy) {
    if (!hashes_as_absent([&](FieldVisitor& v) { v.choice(key, value); },
                          [&](FieldVisitor& v) { v.choice(key, legacy); }))
      choice(key, value);
  }
  void added_choice(const char* key, std::string& value, const std::vector<std::string>& options,
                    std::string legacy) {
    if (!hashes_as_absent([&](FieldVisitor& v) { v.choice(key, value, options); },
                          [&](FieldVisitor& v) { v.choice(key, legacy, options); }))
      choice(key, value, options);
  }
  // A section added later: its legacy value is a default-constructed Section.
  template <class Section>
  void added_section(const char* key, Section& s) {
    Section legacy;
    if (!hashes_as_absent([&](FieldVisitor& v) { v.section(key, s); }, [&](FieldVisitor& v) { v.section(key, legacy); }))
      section(key, s);
  }
  // A seam's per-kind sections: readers take each one present; writers write those in `used`
  // (the selected kind's, and the sections of other kinds it reads, e.g. albert sized by lev's).
  virtual void kind_sections(KindSections& sections, const std::vector<std::string>& used) = 0;
  // A key that no longer exists here: readers reject it, naming where it went.
  virtual void moved(const char* old_key, const char* new_place) {}

 protected:
  virtual void section_with(const char* key, const std::function<void(FieldVisitor&)>& body) = 0;
  // Whether an added key is left out: only the model hash's writer says so, when `current` writes
  // what `legacy` writes.
  virtual bool hashes_as_absent(const std::function<void(FieldVisitor&)>& current,
                                const std::function<void(FieldVisitor&)>& legacy) {
    return false;
  }
};

}  // namespace ember
