// SIGINT / SIGTERM (cluster preemption) set a flag; the trainer checks it after each step,
// writes a checkpoint and exits 0. SIGPIPE is ignored while training.
#pragma once

namespace ember {

void install_preemption_handlers();
bool preemption_requested();

}  // namespace ember
