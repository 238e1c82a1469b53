// The options of every kind behind a seam (model.embedding.<kind>.*, model.mixer.<kind>.*), one
// section per kind, type-erased so that the seam's config need not list its kinds: a kind's
// options struct names its kind (`static constexpr const char* kKind = "lev";`), has
// `void fields(FieldVisitor&)` and optionally `void check(const ConfigChecker&, const std::string& path) const`.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "ember/util/error.h"

namespace ember {

class FieldVisitor;
class ConfigChecker;

class KindOptions {
 public:
  virtual ~KindOptions() = default;
  virtual void fields(FieldVisitor& v) = 0;
  virtual void check(const ConfigChecker& c, const std::string& path) const = 0;
  virtual std::unique_ptr<KindOptions> clone() const = 0;
};

template <class T>
class KindOptionsOf final : public KindOptions {
 public:
  T value;
  void fields(FieldVisitor& v) override { value.fields(v); }
  void check(const ConfigChecker& c, const std::string& path) const override {
    if constexpr (requires { value.check(c, path); }) value.check(c, path);
  }
  std::unique_ptr<KindOptions> clone() const override { return std::make_unique<KindOptionsOf<T>>(*this); }
};

template <class T>
std::unique_ptr<KindOptions> default_kind_options() {
  return std::make_unique<KindOptionsOf<T>>();
}

// kind name -> that kind's options; copies are deep.
class KindSections {
 public:
  KindSections() = default;
  KindSections(const KindSections& other) { *this = other; }
  KindSections& operator=(const KindSections& other) {
    if (this == &other) return *this;
    sections_.clear();
    for (const auto& [kind, opts] : other.sections_) sections_.emplace(kind, opts->clone());
    return *this;
  }
  KindSections(KindSections&&) noexcept = default;
  KindSections& operator=(KindSections&&) noexcept = default;

  void add(const std::string& kind, std::unique_ptr<KindOptions> options) { sections_[kind] = std::move(options); }
  KindOptions* find(const std::string& kind) const {
    auto it = sections_.find(kind);
    return it == sections_.end() ? nullptr : it->second.get();
  }
  const std::map<std::string, std::unique_ptr<KindOptions>>& all() const { return sections_; }

  template <class T>
  T& get() {
    return const_cast<T&>(static_cast<const KindSections&>(*this).get<T>());
  }
  template <class T>
  const T& get() const {
    auto* typed = dynamic_cast<KindOptionsOf<T>*>(find(T::kKind));
    if (!typed) throw ConfigError(std::string("no options section for kind '") + T::kKind + "'");
    return typed->value;
  }

 private:
  std::map<std::string, std::unique_ptr<KindOptions>> sections_;
};

// A seam's config: the selected kind and every kind's options section.
struct KindChoice {
  std::string kind;
  KindSections options;

  template <class T>
  T& get() {
    return options.get<T>();
  }
  template <class T>
  const T& get() const {
    return options.get<T>();
  }
  // Checks the selected kind's options (path: the seam's key, e.g. "model.mixer").
  void check_selected(const ConfigChecker& c, const std::string& path) const {
    if (const KindOptions* o = options.find(kind)) o->check(c, path + "." + kind);
  }
};

}  // namespace ember
