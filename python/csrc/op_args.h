// Helpers shared by the operator bindings: an enum from its spelling, with an error that lists the
// valid ones (the dispatcher turns it into Python's RuntimeError).
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

#include "ember/config/enum_names.h"

namespace ember::ops {

template <class E>
E named(const std::string& spelling, const char* argument) {
  E value{};
  if (!enum_from_name(spelling, value))
    throw std::invalid_argument(fmt::format("ember: {} '{}' is not one of {}", argument, spelling,
                                            fmt::join(enum_spellings<E>(), ", ")));
  return value;
}

}  // namespace ember::ops
