#include "ember/util/host_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ember {

bool retain_freed_host_memory() {
#if defined(__GLIBC__)
  // No mmap'd chunks (they are unmapped when freed), and never trim the heap's free top (-1 is read
  // as the largest size_t).
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, -1) == 1;
#else
  return false;
#endif
}

}  // namespace ember
