// The element types of every op's launch API (no LibTorch headers: nvcc compiles against it). An
// op's launch answers cudaErrorInvalidValue for a type it has no kernel for; kernels/element_of.h
// maps ATen dtypes to these.
#pragma once

namespace ember {

enum class Element { f32, f64, bf16, f16 };

}  // namespace ember
