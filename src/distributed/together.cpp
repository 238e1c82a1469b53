#include "ember/distributed/together.h"

#include <fmt/format.h>

#include <exception>

#include "ember/util/error.h"

namespace ember {

void together(Communicator* comm, int rank, const char* phase, const std::function<void()>& fn) {
  std::exception_ptr failure;
  try {
    fn();
  } catch (...) {
    failure = std::current_exception();
    if (!comm) throw;
  }
  if (!comm) return;
  if (!comm->any(failure != nullptr)) return;
  if (failure) std::rethrow_exception(failure);
  throw Error(fmt::format("{}: another rank failed (its error is above); rank {} stops too", phase, rank));
}

}  // namespace ember
