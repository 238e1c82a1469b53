// ZeRO-1 (distributed.zero: 1): each parameter's AdamW state lives on one rank, its owner. Owners
// are assigned whole parameters, in registration order, each to the rank holding the fewest
// elements so far (deterministic, balanced to within one parameter). After the averaged
// gradients, each rank steps the parameters it owns and every owner broadcasts them (one
// flattened collective per owner), so all ranks end the step with the same parameters.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "ember/distributed/communicator.h"

namespace ember {

std::vector<int> assign_owners(const std::vector<int64_t>& numels, int world);

class OwnedParameterSync {
 public:
  OwnedParameterSync(std::vector<at::Tensor> params, std::vector<int> owners, Communicator& comm);
  void sync();  // after the optimizer step: every owner's parameters to every rank

 private:
  std::vector<at::Tensor> params_;
  std::vector<int> owners_;
  std::vector<at::Tensor> flats_;  // one buffer per owner
  Communicator& comm_;
};

}  // namespace ember
