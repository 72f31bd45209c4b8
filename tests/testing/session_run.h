// What the int8 agreement tests (tests/runtime/*_integer_test.cc,
// qlinear_conv_test.cc) share: whether python3-onnx and onnxruntime-node are
// there, a bytewise comparison of outputs, and one model run through a
// Session on fed tensors. Header-only: it needs the runtime, which the
// testing library does not link.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "runtime/session.h"
#include "testing/test_models.h"

namespace onnx_prepack::testing {

inline bool python_available() {
  std::string out;
  return run_command("/usr/bin/python3 -c 'import onnx, numpy'", &out) == 0;
}

inline bool ort_available() {
  std::string out;
  return std::filesystem::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         run_command("node --version", &out) == 0;
}

// One type, one shape, the same bytes.
inline bool same_bits(const runtime::HostTensor& a, const runtime::HostTensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// Runs `model` on the feeds and returns its first output; nullopt (with a
// test failure) on any error.
inline std::optional<runtime::HostTensor> run_model(
    const std::string& model, const std::map<std::string, runtime::HostTensor*>& feeds,
    base::ThreadPool* pool) {
  using runtime::Session;
  auto loaded = format::Model::load(model);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  if (!loaded.ok()) return std::nullopt;
  std::shared_ptr<const format::Model> m(std::move(*loaded));
  runtime::SessionOptions opts;
  opts.pool = pool;
  auto s = Session::create(m, opts);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return std::nullopt;
  std::map<std::string, Session::Feed> shapes;
  std::map<std::string, runtime::Tensor> views;
  for (const auto& [name, t] : feeds) {
    shapes[name] = {t->dtype(), t->shape()};
    views[name] = t->view();
  }
  auto planned = (*s)->plan(shapes);
  EXPECT_TRUE(planned.ok()) << model << ": " << planned.status().message();
  if (!planned.ok()) return std::nullopt;
  auto got = (*s)->run(views);
  EXPECT_TRUE(got.ok()) << model << ": " << got.status().message();
  if (!got.ok()) return std::nullopt;
  return std::move((*got)[0]);
}

}  // namespace onnx_prepack::testing
