// Running ember's own subcommands as child processes (a sweep's members): spawn with the output
// appended to a file or inherited, wait for the exit status.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace ember {

// The path of the running executable (/proc/self/exe), to run its own subcommands.
std::string self_executable();

// Starts argv[0] with the arguments; stdout and stderr go to `output` (appended; empty: inherited),
// stdout alone to `stdout_file` when given (then stderr goes to `output`). Throws Error when it
// cannot start.
pid_t spawn_child(const std::vector<std::string>& argv, const std::string& output = "",
                  const std::string& stdout_file = "");
// Waits for it: its exit code, or 128 + the signal that ended it.
int wait_child(pid_t pid);
// Sends `sig` to every child spawned and not yet waited for; async-signal-safe (for a handler
// that passes SIGINT / SIGTERM on: a sweep stopped with kill reaches its trainer).
void signal_children(int sig);
// Both, in one call.
int run_child(const std::vector<std::string>& argv, const std::string& output = "",
              const std::string& stdout_file = "");

}  // namespace ember
