// A training step frees and re-allocates the same large host buffers every step (logits chunks,
// gradients, activations). glibc serves every request above 32 MB with a fresh mmap and returns it
// with munmap, so each step pays a page fault and a page zeroing per 4 KB of them: 15% of a
// GPT-2-small step on 2 cores (perf: clear_page_erms, exc_page_fault). Keeping freed memory in the
// heap lets the next step reuse it. The process's peak resident set is unchanged; it is simply not
// given back to the system until exit.
#pragma once

namespace ember {

// Serve large allocations from the heap and keep what is freed. False: not glibc (nothing changed).
bool retain_freed_host_memory();

}  // namespace ember
