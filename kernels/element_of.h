// The launch APIs' element type (kernels/element.h) of an ATen dtype; an error naming the op for a
// dtype no kernel takes. Each op's glue checks first which of these its kernels run.
#pragma once
#include <ATen/ATen.h>
#include <fmt/format.h>

#include "ember/util/error.h"
#include "kernels/element.h"

namespace ember {

inline Element element_of(at::ScalarType t, const char* op) {
  switch (t) {
    case at::kFloat: return Element::f32;
    case at::kDouble: return Element::f64;
    case at::kBFloat16: return Element::bf16;
    case at::kHalf: return Element::f16;
    default: throw Error(fmt::format("{}: no kernel for dtype {}", op, c10::toString(t)));
  }
}

}  // namespace ember
