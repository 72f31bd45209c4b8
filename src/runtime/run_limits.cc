#include "runtime/run_limits.h"

#include <cstdio>
#include <string>

namespace onnx_prepack::runtime {

RunLimits::RunLimits(const RunOptions& options)
    : start_(Clock::now()), deadline_ms_(options.deadline_ms), terminate_(options.terminate) {
  // Past ~292 years the time point would overflow: such a deadline is none.
  constexpr uint64_t kMaxMs = uint64_t(1) << 43;
  if (deadline_ms_ > kMaxMs) deadline_ms_ = 0;
  deadline_ = start_ + std::chrono::milliseconds(int64_t(deadline_ms_));
}

Status RunLimits::stop_status(std::string_view where) const {
  const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
  char ms[32];
  std::snprintf(ms, sizeof(ms), "%.1f", elapsed);
  // The flag wins: a terminated run reports why it was stopped, not the clock.
  if (terminate_ != nullptr && terminate_->load(std::memory_order_relaxed)) {
    return cancelled(std::string(where) +
                     ": exiting due to terminate flag being set to true (the run was stopped " +
                     ms + " ms after it started)");
  }
  return deadline_exceeded(std::string(where) + ": the run passed its deadline of " +
                           std::to_string(deadline_ms_) + " ms (" + ms + " ms since it started)");
}

}  // namespace onnx_prepack::runtime
