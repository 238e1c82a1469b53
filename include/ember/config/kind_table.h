// Lookups over a seam's registry table (a vector of rows with `name` and `default_options`).
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "ember/config/kind_sections.h"
#include "ember/util/error.h"
#include "ember/util/suggest.h"

namespace ember {

template <class Row>
std::vector<std::string> kind_names(const std::vector<Row>& table) {
  std::vector<std::string> names;
  names.reserve(table.size());
  for (const auto& row : table) names.push_back(row.name);
  return names;
}

// Each kind's default options, for the seam's config.
template <class Row>
KindSections kind_default_options(const std::vector<Row>& table) {
  KindSections sections;
  for (const auto& row : table)
    if (row.default_options) sections.add(row.name, row.default_options());
  return sections;
}

// The sections a kind's config uses: its own and those of the kinds it reads (an unknown kind: its
// own name, for the validator to reject).
template <class Row>
std::vector<std::string> kind_sections_used(const std::vector<Row>& table, const std::string& name) {
  std::vector<std::string> used{name};
  for (const auto& row : table)
    if (row.name == name) used.insert(used.end(), row.reads.begin(), row.reads.end());
  return used;
}

// The row of `name`; a ConfigError naming `key`, the kinds and the closest one otherwise.
template <class Row>
const Row& find_kind(const std::vector<Row>& table, const std::string& name, const std::string& key) {
  for (const auto& row : table)
    if (row.name == name) return row;
  const auto names = kind_names(table);
  const std::string near = closest_match(name, names);
  throw ConfigError(fmt::format("{}: unknown kind '{}' (kinds: {}){}", key, name, fmt::join(names, ", "),
                                near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

}  // namespace ember
