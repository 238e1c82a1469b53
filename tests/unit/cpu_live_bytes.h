// Bytes of CPU tensor storage allocated within a scope and still alive: a counting wrapper around
// the CPU allocator (c10::SetCPUAllocator) for the scope's lifetime. Tensors allocated inside and
// freed later, even after the scope, are subtracted when they are freed.
#pragma once
#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <cstring>

namespace ember::testing {

class CpuLiveBytes {
 public:
  CpuLiveBytes() : base_(c10::GetCPUAllocator()) {
    counter().base = base_;
    counter().live = 0;
    c10::SetCPUAllocator(&counter());
  }
  ~CpuLiveBytes() { c10::SetCPUAllocator(base_); }
  CpuLiveBytes(const CpuLiveBytes&) = delete;
  CpuLiveBytes& operator=(const CpuLiveBytes&) = delete;
  int64_t bytes() const { return counter().live.load(); }

 private:
  struct Counting final : c10::Allocator {
    c10::Allocator* base = nullptr;
    std::atomic<int64_t> live{0};
    struct Held {
      c10::DataPtr inner;
      int64_t bytes;
    };
    c10::DataPtr allocate(size_t n) override {
      c10::DataPtr inner = base->allocate(n);
      void* data = inner.get();
      const auto device = inner.device();
      live += static_cast<int64_t>(n);
      return {data, new Held{std::move(inner), static_cast<int64_t>(n)}, &release, device};
    }
    static void release(void* held) {
      auto* h = static_cast<Held*>(held);
      counter().live -= h->bytes;
      delete h;
    }
    void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
  };
  static Counting& counter() {
    static Counting* c = new Counting;  // outlives every tensor it allocated
    return *c;
  }
  c10::Allocator* base_;
};

}  // namespace ember::testing
