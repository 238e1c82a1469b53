#include "ember/util/denormals.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <atomic>

namespace ember {

bool flush_denormals_on_all_threads(bool on) {
  std::atomic<bool> ok{at::globalContext().setFlushDenormal(on)};
  // One item per worker: ATen's OpenMP backend gives each thread of the team one of them.
  at::parallel_for(0, at::get_num_threads(), 1, [&ok, on](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (!at::globalContext().setFlushDenormal(on)) ok = false;
  });
  return ok;
}

}  // namespace ember
