// distributed.* keys. The c10d engine (Gloo on CPU, NCCL on GPU) reads the torchrun / Slurm
// environment; a single process is the default.
#pragma once
#include <string>

#include "ember/config/fields.h"

namespace ember {

struct DistributedConfig {
  std::string backend = "auto";  // auto | gloo | nccl

  template <class V>
  void fields(V& v) {
    v.choice("backend", backend, {"auto", "gloo", "nccl"});
  }
};

}  // namespace ember
