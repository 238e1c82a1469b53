// The path each fused op takes in a run: the `kernels:` section resolved on the run's device and
// precision (auto: the on-device check, model/kernel_table.h), the same on every rank (an op any
// rank refuses takes ATen everywhere), installed for the process and logged. A resumed run keeps
// the choices it trained with where the section says auto and the check's key is unchanged, and
// says which ops differ from them otherwise.
#pragma once
#include <nlohmann/json.hpp>

#include "ember/kernels/kernels_config.h"

namespace ember {

class Communicator;

struct KernelSetup {
  kernels::Choices choices;
  nlohmann::json record;  // for the run's train state: the choices and the key of the check's table
  nlohmann::json table;   // the check's table behind auto (null when no op is auto), for kernels.json
};

// `resumed`: the record of the checkpoint a run resumes from (null for a new run or one without).
KernelSetup set_up_kernels(const KernelsConfig& cfg, const at::Device& device, bool bf16, Communicator* comm,
                           const nlohmann::json& resumed);

}  // namespace ember
