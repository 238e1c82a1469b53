// Writes a component's keys (its fields() list) as a JSON object, e.g. a kind's default options.
#pragma once
#include <nlohmann/json.hpp>

#include "ember/config/fields.h"

namespace ember {

class JsonWriter final : public FieldVisitor {
 public:
  explicit JsonWriter(nlohmann::json& out) : out_(out) { out_ = nlohmann::json::object(); }

  void field(const char* key, int64_t& value, Bound = {}) override { out_[key] = value; }
  void field(const char* key, double& value, Bound = {}) override { out_[key] = value; }
  void field(const char* key, bool& value) override { out_[key] = value; }
  void field(const char* key, std::string& value) override { out_[key] = value; }
  void field(const char* key, std::vector<double>& value, Bound = {}) override { out_[key] = value; }
  void field(const char* key, std::vector<std::string>& value) override { out_[key] = value; }
  void choice(const char* key, std::string& value, const std::vector<std::string>&) override { out_[key] = value; }
  using FieldVisitor::choice;
  void kind_sections(KindSections& sections, const std::vector<std::string>& used) override {
    for (const auto& kind : used)
      if (KindOptions* opts = sections.find(kind))
        section_with(kind.c_str(), [opts](FieldVisitor& v) { opts->fields(v); });
  }

 protected:
  void section_with(const char* key, const std::function<void(FieldVisitor&)>& body) override {
    JsonWriter sub(out_[key]);
    body(sub);
  }

 private:
  nlohmann::json& out_;
};

// A section's keys and values as JSON.
template <class Section>
nlohmann::json section_json(Section& s) {
  nlohmann::json out;
  JsonWriter writer(out);
  s.fields(writer);
  return out;
}

}  // namespace ember
