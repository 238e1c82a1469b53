// An op to the observers of ATen's ops for the scope of a call into one of ember's kernels: named in
// a profile and counted by the kernel budget, and the non-finite trace (model/nonfinite_trace.h)
// sees its inputs and outputs like any other op's.
#pragma once
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>

#include <utility>
#include <vector>

namespace ember::kernels {

struct RecordedOp {
  std::vector<c10::IValue> inputs;
  at::RecordFunction record{at::RecordScope::FUNCTION};
  RecordedOp(const char* name, std::vector<c10::IValue> in) : inputs(std::move(in)) {
    if (record.isActive()) record.before(name, &inputs);
  }
  void outputs(std::vector<c10::IValue> out) {
    if (record.isActive() && record.needsOutputs()) record.setOutputs(std::move(out));
  }
};

}  // namespace ember::kernels
