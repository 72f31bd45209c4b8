// Session::plan's outcome as one Status for tests: kNeedsInputValues becomes
// an error whose message says so.
#pragma once

#include "onnx_prepack/status.h"
#include "runtime/session.h"

namespace onnx_prepack::testing {

inline Status plan_status(const Result<runtime::PlanOutcome>& r) {
  if (!r.ok()) return r.status();
  if (*r == runtime::PlanOutcome::kNeedsInputValues)
    return invalid_argument("plan needs the values of fed inputs (kNeedsInputValues)");
  return ok_status();
}

inline bool needs_values(const Result<runtime::PlanOutcome>& r) {
  return r.ok() && *r == runtime::PlanOutcome::kNeedsInputValues;
}

}  // namespace onnx_prepack::testing
