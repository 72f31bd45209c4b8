#include "runtime/activity.h"

#include <exception>

#include "runtime/tensor.h"

namespace onnx_prepack::runtime {
namespace {

thread_local int t_depth = 0;
thread_local std::string t_last;  // the note an exception unwound past

}  // namespace

ActivityNote::ActivityNote(const char* phase, const onnx::NodeProto& node) noexcept
    : phase_(phase), node_(&node), unwinding_at_start_(std::uncaught_exceptions()) {
  // A new outermost activity: whatever an earlier, caught exception left is stale.
  if (t_depth++ == 0) t_last.clear();
}

ActivityNote::~ActivityNote() {
  --t_depth;
  // Copied now: the node (and its session) may be gone when the catch runs.
  if (std::uncaught_exceptions() <= unwinding_at_start_ || !t_last.empty()) return;
  try {
    t_last = std::string(phase_) + " node '" + node_->name() + "' (" + node_->op_type() + ")";
  } catch (...) {  // out of memory again: no note
    t_last.clear();
  }
}

std::string take_activity() {
  std::string s;
  s.swap(t_last);
  return s;
}

std::string out_of_memory_message() {
  const std::string where = take_activity();
  // What was reserved is gone by now (unwinding released it): the budget only.
  return "out of memory" + (where.empty() ? std::string() : " while " + where) +
         " (memory budget " + std::to_string(memory_budget_bytes()) + " bytes)";
}

}  // namespace onnx_prepack::runtime
