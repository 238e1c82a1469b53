#include "ember/train/device_memory.h"

#include <c10/core/CachingDeviceAllocator.h>

namespace ember {

namespace {

c10::DeviceAllocator* caching_allocator(at::Device device) {
  if (device.is_cpu() || device.is_meta()) return nullptr;
  return dynamic_cast<c10::DeviceAllocator*>(c10::GetAllocator(device.type()));
}

c10::DeviceIndex index_of(at::Device device) { return device.has_index() ? device.index() : c10::DeviceIndex{0}; }

}  // namespace

std::optional<DevicePeakMemory> device_peak_memory(at::Device device) {
  auto* allocator = caching_allocator(device);
  if (allocator == nullptr || !allocator->initialized()) return std::nullopt;  // no tensor made there yet
  const auto stats = allocator->getDeviceStats(index_of(device));
  constexpr auto all = static_cast<size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE);
  return DevicePeakMemory{stats.allocated_bytes[all].peak, stats.reserved_bytes[all].peak};
}

void reset_device_peak_memory(at::Device device) {
  auto* allocator = caching_allocator(device);
  if (allocator != nullptr && allocator->initialized()) allocator->resetPeakStats(index_of(device));
}

}  // namespace ember
