// Closed option sets (gate, impl, schedule, precision, ...) as enums. Each enum spells its values
// once, in a function found by argument-dependent lookup:
//   inline std::span<const EnumName<Gate>> enum_names(Gate) { static constexpr EnumName<Gate> n[] = {...}; return n; }
// The config schema parses the spelling once; code compares enum values, never strings.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ember {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E>
requires std::is_enum_v<E> std::string enum_name(E value) {
  for (const auto& n : enum_names(E{}))
    if (n.value == value) return n.name;
  return "?";
}

template <class E>
requires std::is_enum_v<E> std::vector<std::string> enum_spellings() {
  std::vector<std::string> out;
  for (const auto& n : enum_names(E{})) out.emplace_back(n.name);
  return out;
}

// The value spelled `name`; false when no value has that spelling.
template <class E>
requires std::is_enum_v<E>
bool enum_from_name(std::string_view name, E& out) {
  for (const auto& n : enum_names(E{}))
    if (name == n.name) {
      out = n.value;
      return true;
    }
  return false;
}

}  // namespace ember
