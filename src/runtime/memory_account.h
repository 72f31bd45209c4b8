// The one memory budget of a process's runs (memory_budget_bytes(), tensor.h):
// every allocation whose size comes from a model or its inputs (feeds,
// outputs, the arena, folded constants, operator tables) reserves its bytes
// here before it allocates, and releases them when freed, so the budget
// bounds what is live at once, not one tensor. Weights (mapped initializers
// and packs) are not counted: they are the model's size, known before a run.
// docs/runtime.md, "Memory budget".
#pragma once

#include <cstdint>
#include <string_view>

#include "onnx_prepack/status.h"

namespace onnx_prepack::runtime {

// Bytes held against the budget; released on destruction. Move-only.
class MemoryReservation {
 public:
  MemoryReservation() = default;
  ~MemoryReservation();
  MemoryReservation(MemoryReservation&& o) noexcept : bytes_(o.bytes_) { o.bytes_ = 0; }
  MemoryReservation& operator=(MemoryReservation&& o) noexcept;
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  uint64_t bytes() const { return bytes_; }

 private:
  friend Result<MemoryReservation> reserve_memory(uint64_t, std::string_view);
  friend MemoryReservation account_memory(uint64_t);
  explicit MemoryReservation(uint64_t bytes) : bytes_(bytes) {}
  uint64_t bytes_ = 0;
};

// Reserves `bytes`, or resource_exhausted naming `what`, the size, what is
// live and the budget.
Result<MemoryReservation> reserve_memory(uint64_t bytes, std::string_view what);
// Counts `bytes` without refusing (allocations whose size the plan checked).
MemoryReservation account_memory(uint64_t bytes);
// Bytes reserved now, process-wide.
uint64_t memory_in_use();

}  // namespace onnx_prepack::runtime
