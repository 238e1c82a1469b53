// A stop that any rank may ask for (SIGTERM may reach one rank or all), agreed on by every rank at
// the same step without waiting inside a step, neither on the device nor on the peers. Each step's
// flags are summed by an asynchronous all-reduce; on a GPU the sum is copied to pinned host memory
// behind an event. The vote is read `lag` steps later, when the collective has long finished. Every
// rank casts and reads the same votes at the same steps, so all stop together, `lag` steps after
// the first ask.
#pragma once
#include <c10/core/Event.h>

#include <deque>
#include <optional>

#include "ember/distributed/communicator.h"

namespace ember {

class StopVote {
 public:
  // comm null: one process, whose own flag decides at once.
  explicit StopVote(Communicator* comm, int64_t lag = 2) : comm_(comm), lag_(lag) {}
  // Casts this step's flag; true when the vote cast `lag` steps ago found a rank asking.
  bool cast(bool ask);
  // Reads every vote still pending (all ranks call it at the same point, as they cast alike):
  // true when one of them found a rank asking.
  bool drain();

 private:
  struct Ballot {
    at::Tensor sum, host;        // the all-reduced flags; on a GPU their pinned host copy
    PendingOp op;                // the collective (CPU: waited on when read)
    std::optional<c10::Event> copied;  // GPU: recorded after the host copy
  };
  bool read(Ballot& ballot);
  Communicator* comm_;
  int64_t lag_;
  std::deque<Ballot> pending_;
};

}  // namespace ember
