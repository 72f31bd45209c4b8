#include "runtime/memory_account.h"

#include <atomic>
#include <string>

#include "runtime/tensor.h"

namespace onnx_prepack::runtime {
namespace {

std::atomic<uint64_t> g_in_use{0};

}  // namespace

MemoryReservation::~MemoryReservation() {
  if (bytes_ != 0) g_in_use.fetch_sub(bytes_, std::memory_order_relaxed);
}

MemoryReservation& MemoryReservation::operator=(MemoryReservation&& o) noexcept {
  if (this != &o) {
    if (bytes_ != 0) g_in_use.fetch_sub(bytes_, std::memory_order_relaxed);
    bytes_ = o.bytes_;
    o.bytes_ = 0;
  }
  return *this;
}

Result<MemoryReservation> reserve_memory(uint64_t bytes, std::string_view what) {
  const uint64_t budget = memory_budget_bytes();
  uint64_t now = g_in_use.load(std::memory_order_relaxed);
  do {
    if (bytes > budget || now > budget - bytes) {
      return resource_exhausted(std::string(what) + ": needs " + std::to_string(bytes) +
                                " bytes while " + std::to_string(now) +
                                " bytes are live, over the memory budget of " +
                                std::to_string(budget) + " bytes");
    }
  } while (!g_in_use.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
  return MemoryReservation(bytes);
}

MemoryReservation account_memory(uint64_t bytes) {
  g_in_use.fetch_add(bytes, std::memory_order_relaxed);
  return MemoryReservation(bytes);
}

uint64_t memory_in_use() { return g_in_use.load(std::memory_order_relaxed); }

}  // namespace onnx_prepack::runtime
