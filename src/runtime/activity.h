// What this thread's runtime is doing (planning or running which node), for
// the catch-alls that turn std::bad_alloc into an error (the CLI's main, the C
// API's guard): an allocation that throws has no size or owner to report, so
// the note says where it happened. A note is kept only when an exception
// unwinds past it (the innermost one wins) and is taken once.
#pragma once

#include <string>

#include "onnx_prepack.pb.h"

namespace onnx_prepack::runtime {

class ActivityNote {
 public:
  // `phase` is a literal ("planning", "running", "folding").
  ActivityNote(const char* phase, const onnx::NodeProto& node) noexcept;
  ~ActivityNote();
  ActivityNote(const ActivityNote&) = delete;
  ActivityNote& operator=(const ActivityNote&) = delete;

 private:
  const char* phase_;
  const onnx::NodeProto* node_;
  int unwinding_at_start_;
};

// "planning node 'mm' (MatMul)" for the innermost note an exception unwound
// past on this thread since the outermost note began, else empty; clears it.
std::string take_activity();

// The text a catch-all gives a std::bad_alloc: "out of memory while planning
// node 'mm' (MatMul) (memory budget B bytes)".
std::string out_of_memory_message();

}  // namespace onnx_prepack::runtime
