// What the single-node model tests (tests/runtime/hostile_ops_test.cc,
// contrib_norm_test.cc, attention_test.cc) share: a fed tensor, planning and
// running a model on such feeds, and an error check by message parts.
// Header-only: it needs the runtime, which the testing library does not link.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::testing {

// A fed input: type, shape and bytes.
struct Fed {
  int32_t dtype;
  runtime::Shape shape;
  const void* data;
};

// Plans (and runs, when planning succeeds) `model` on `feeds`; the first
// failure, or the outputs. `pin_values`: every fed value is known at plan time
// (GroupQueryAttention's total_sequence_length must be).
inline Result<std::vector<runtime::HostTensor>> plan_and_run_model(
    const onnx::ModelProto& model, const std::map<std::string, Fed>& feeds,
    bool pin_values = false) {
  using runtime::Session;
  auto fm = std::shared_ptr<const format::Model>(format::Model::from_proto(model, "."));
  OP_ASSIGN_OR_RETURN(auto s, Session::create(fm, {}));
  std::map<std::string, runtime::Tensor> run_feeds;
  for (const auto& [name, f] : feeds)
    run_feeds[name] = runtime::Tensor{f.dtype, f.shape, const_cast<void*>(f.data)};
  std::map<std::string, Session::Feed> plan_feeds;
  for (const auto& [name, t] : run_feeds)
    plan_feeds[name] = Session::Feed{t.dtype, t.shape, pin_values ? &run_feeds[name] : nullptr};
  OP_RETURN_IF_ERROR(plan_status(s->plan(plan_feeds)));
  return s->run(run_feeds);
}

// Expects a failure whose message holds every one of `parts`.
inline void expect_error(const Result<std::vector<runtime::HostTensor>>& r,
                         const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok()) << "expected an error with '" << parts.front() << "'";
  const std::string& msg = r.status().message();
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
}

template <typename T>
std::vector<T> values(const runtime::HostTensor& t) {
  return std::vector<T>(t.as<T>(), t.as<T>() + t.numel());
}

}  // namespace onnx_prepack::testing
