// A phase every rank of a job goes through together: when it fails on any rank, every rank stops,
// the failing one with its own error and the others naming the phase, instead of some ranks
// waiting in the next collective for a peer that has left.
#pragma once
#include <functional>

#include "ember/distributed/communicator.h"

namespace ember {

// Runs `fn`; with a communicator, then agrees with the other ranks whether any failed (one
// collective). Without one (a single process) it is `fn()`.
void together(Communicator* comm, int rank, const char* phase, const std::function<void()>& fn);

}  // namespace ember
