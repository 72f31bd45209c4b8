// The limits of one run: an optional deadline and a terminate flag another
// thread may set (onnx_prepack::RunOptions). The session checks them before
// every node, the If/Loop/Scan kernels before every body run, and the kernels
// with a work bound (work_budget.h) every kPollSteps inner steps, so a runaway
// model (a Loop with a fed trip count of 2^62) stops within one node's time.
// docs/runtime.md, "Deadline and cancellation".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "onnx_prepack/options.hpp"
#include "onnx_prepack/status.h"

namespace onnx_prepack::runtime {

class RunLimits {
 public:
  using Clock = std::chrono::steady_clock;
  // How many inner steps a long kernel runs between two polls: a clock read
  // costs ~20 ns, a step at least ~1 ns, so polling costs under 0.1%.
  static constexpr uint64_t kPollSteps = uint64_t(1) << 16;

  RunLimits() = default;  // no deadline, not cancellable
  // The clock starts now.
  explicit RunLimits(const RunOptions& options);

  bool active() const { return deadline_ms_ > 0 || terminate_ != nullptr; }
  // True once the run must stop. Thread-safe (pool workers poll it too).
  bool stop_now() const {
    if (terminate_ != nullptr && terminate_->load(std::memory_order_relaxed)) return true;
    return deadline_ms_ > 0 && Clock::now() >= deadline_;
  }
  // ok, or why the run stops, naming `where` (the node being run), the
  // deadline and the time since the run started.
  Status check(std::string_view where) const {
    return active() && stop_now() ? stop_status(where) : ok_status();
  }
  Status stop_status(std::string_view where) const;

 private:
  Clock::time_point start_{}, deadline_{};
  uint64_t deadline_ms_ = 0;
  const std::atomic<bool>* terminate_ = nullptr;
};

// Counts a long kernel's inner steps and polls the limits every kPollSteps.
// One per thread: the count is not shared.
class StepPoller {
 public:
  explicit StepPoller(const RunLimits* limits)
      : limits_(limits != nullptr && limits->active() ? limits : nullptr) {}
  // Adds `steps`; true when the run must stop (the kernel then reports
  // limits->stop_status() and returns: its outputs are not used).
  bool charge(uint64_t steps) {
    if (limits_ == nullptr) return false;
    pending_ += steps;
    if (pending_ < RunLimits::kPollSteps) return false;
    pending_ = 0;
    return limits_->stop_now();
  }

 private:
  const RunLimits* limits_;
  uint64_t pending_ = 0;
};

// A run stopped by its limits (kDeadlineExceeded, kCancelled): not a failure
// of the model, and never taken for one (an If branch that cannot be planned).
inline bool is_stop(const Status& s) {
  return s.code() == StatusCode::kDeadlineExceeded || s.code() == StatusCode::kCancelled;
}

// The check of a possibly null limits pointer (kernels get one in KernelIO).
inline Status check_limits(const RunLimits* limits, std::string_view where) {
  return limits == nullptr ? ok_status() : limits->check(where);
}

}  // namespace onnx_prepack::runtime
