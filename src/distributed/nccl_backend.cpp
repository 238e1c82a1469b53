// ProcessGroupNCCL: compiled only when ember builds with CUDA (src/CMakeLists.txt defines
// USE_C10D_NCCL for this file alone); without it, asking for nccl is an error.
#include "communicator_impl.h"
#include "ember/util/error.h"

#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace ember {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                    int world, std::chrono::seconds timeout) {
#ifdef USE_C10D_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, options);
#else
  (void)store, (void)rank, (void)world, (void)timeout;
  throw ConfigError("distributed.backend: this ember was built without CUDA, so without NCCL; use gloo");
#endif
}

}  // namespace ember
