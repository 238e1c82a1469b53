#include "ember/train/preemption.h"

#include <atomic>
#include <csignal>

namespace ember {
namespace {
volatile std::sig_atomic_t g_requested = 0;
extern "C" void on_signal(int) { g_requested = 1; }
}  // namespace

void install_preemption_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // A reader of stdout that went away (a launcher killed with -9, `| head`) must not kill the run
  // before it checkpoints: writes to the closed pipe fail instead, and train.log keeps the record.
  std::signal(SIGPIPE, SIG_IGN);
}

bool preemption_requested() { return g_requested != 0; }

}  // namespace ember
