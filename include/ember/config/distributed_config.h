// distributed.* keys. The c10d engine (Gloo on CPU, NCCL on GPU) will read the torchrun / Slurm
// environment; until the distributed trainer lands, ember runs as one process and a non-default
// backend is an error.
#pragma once
#include "ember/config/fields.h"

namespace ember {

enum class Backend { automatic, gloo, nccl };
inline std::span<const EnumName<Backend>> enum_names(Backend) {
  static constexpr EnumName<Backend> names[] = {
      {Backend::automatic, "auto"}, {Backend::gloo, "gloo"}, {Backend::nccl, "nccl"}};
  return names;
}

struct DistributedConfig {
  Backend backend = Backend::automatic;

  void fields(FieldVisitor& v) { v.choice("backend", backend); }
  void check(const ConfigChecker& c) const {
    c.require(backend == Backend::automatic, "distributed.backend",
              "distributed training is not implemented yet: ember runs as one process; remove the key (or "
              "set it to auto)");
  }
};

}  // namespace ember
