// The C API's error paths from C++ (through the RAII header): null arguments,
// missing and corrupt files, bad options and inputs give a clear code and a
// message naming the object; nothing throws or crashes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "onnx_prepack/c_api.h"
#include "onnx_prepack/onnx_prepack.hpp"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

using testing::TempDir;

std::string last() { return op_last_error_message(); }

std::string write_mlp(const TempDir& dir) {
  const std::string path = dir.file("mlp.onnx");
  testing::write_bytes(path, testing::make_mlp(8, 16, 4, 7).SerializeAsString());
  return path;
}

TEST(CApi, NullArgumentsAreInvalidArgument) {
  op_model* m = reinterpret_cast<op_model*>(1);
  EXPECT_EQ(op_model_open(nullptr, &m), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(last(), "op_model_open: path is null");
  EXPECT_EQ(op_model_open("x.onnx", nullptr), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "op_model_open: out is null");
  op_model_counts c;
  EXPECT_EQ(op_model_get_counts(nullptr, &c), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_model_check(nullptr, nullptr, nullptr), OP_STATUS_INVALID_ARGUMENT);
  uint8_t d[32];
  EXPECT_EQ(op_tensor_digest(nullptr, "w", "blake3", 0, d), OP_STATUS_INVALID_ARGUMENT);
  op_resolver* r = nullptr;
  EXPECT_EQ(op_resolver_create(nullptr, nullptr, &r), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "op_resolver_create: model is null");
  op_resolution res;
  EXPECT_EQ(op_resolve(nullptr, "w", nullptr, 0, &res), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_resolver_store(nullptr, "w", nullptr, nullptr, 0, nullptr, 0, nullptr, 0),
            OP_STATUS_INVALID_ARGUMENT);
  op_session* s = nullptr;
  EXPECT_EQ(op_session_create(nullptr, nullptr, &s), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_session_run(nullptr, nullptr, 0), OP_STATUS_INVALID_ARGUMENT);
  size_t n = 0;
  EXPECT_EQ(op_builtin_formats(0, OP_DTYPE_FLOAT, 1, nullptr, 4, &n), OP_STATUS_INVALID_ARGUMENT);
  // A success clears the message.
  EXPECT_EQ(op_builtin_formats(0, OP_DTYPE_FLOAT, 1, nullptr, 0, &n), OP_STATUS_OK);
  EXPECT_EQ(last(), "");
  EXPECT_EQ(op_last_error_code(), OP_STATUS_OK);
}

TEST(CApi, MissingAndCorruptFiles) {
  TempDir dir;
  api::Model model;
  const std::string missing = dir.file("missing.onnx");
  op_status_code rc = api::Model::open(missing.c_str(), &model);
  EXPECT_NE(rc, OP_STATUS_OK);
  EXPECT_FALSE(model);
  EXPECT_NE(last().find("missing.onnx"), std::string::npos) << last();

  const std::string corrupt = dir.file("corrupt.onnx");
  testing::write_bytes(corrupt, std::string("\x0a\xff\xff\xff\xff\x0f garbage"));
  EXPECT_EQ(api::Model::open(corrupt.c_str(), &model), OP_STATUS_DATA_LOSS) << last();
  EXPECT_NE(last().find("corrupt.onnx"), std::string::npos) << last();

  // A truncated valid model.
  std::string bytes = testing::make_mlp(8, 16, 4, 7).SerializeAsString();
  const std::string truncated = dir.file("truncated.onnx");
  testing::write_bytes(truncated, bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(api::Model::open(truncated.c_str(), &model), OP_STATUS_DATA_LOSS) << last();

  api::Session session;
  EXPECT_NE(api::Session::create(corrupt.c_str(), nullptr, &session), OP_STATUS_OK);
  EXPECT_FALSE(session);
}

TEST(CApi, ModelCountsCheckAndDigest) {
  TempDir dir;
  api::Model model;
  ASSERT_EQ(api::Model::open(write_mlp(dir).c_str(), &model), OP_STATUS_OK) << last();
  op_model_counts c{};
  ASSERT_EQ(model.counts(&c), OP_STATUS_OK);
  EXPECT_EQ(c.initializers, 4u);
  EXPECT_EQ(c.opset, 13);
  op_diagnostic diag;
  EXPECT_EQ(model.diagnostic(OP_DIAGNOSTIC_ERROR, 0, &diag), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last().find("not checked"), std::string::npos);
  uint64_t errors = 9, warnings = 9;
  ASSERT_EQ(model.check(&errors, &warnings), OP_STATUS_OK);
  EXPECT_EQ(errors, 0u);
  uint8_t d1[32], d2[32];
  ASSERT_EQ(model.digest("W1", "sha256", 0, d1), OP_STATUS_OK);
  ASSERT_EQ(model.digest("W1", "sha256", 3, d2), OP_STATUS_OK);
  EXPECT_EQ(std::memcmp(d1, d2, 32), 0);
  EXPECT_EQ(model.digest("W1", "sha256", 100000, d2), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(model.digest("nope", "blake3", 0, d1), OP_STATUS_NOT_FOUND);
  EXPECT_EQ(last(), "op_tensor_digest: no initializer named 'nope'");
}

TEST(CApi, CheckerErrorsAreListed) {
  TempDir dir;
  onnx::ModelProto p = testing::make_mlp(8, 16, 4, 7);
  auto* ct = p.add_compiled_tensors();
  ct->set_source_name("W1");
  ct->set_device(5);  // no devices at all
  const std::string path = dir.file("bad.onnx");
  testing::write_bytes(path, p.SerializeAsString());
  api::Model model;
  ASSERT_EQ(api::Model::open(path.c_str(), &model), OP_STATUS_OK) << last();
  uint64_t errors = 0, warnings = 0;
  ASSERT_EQ(model.check(&errors, &warnings), OP_STATUS_OK);
  ASSERT_GT(errors, 0u);
  for (uint64_t i = 0; i < errors; ++i) {
    op_diagnostic diag;
    ASSERT_EQ(model.diagnostic(OP_DIAGNOSTIC_ERROR, i, &diag), OP_STATUS_OK);
    EXPECT_GT(std::strlen(diag.rule), 0u);
    EXPECT_EQ(std::string(diag.path).rfind("compiled_tensors[0]", 0), 0u) << diag.path;
    EXPECT_GT(std::strlen(diag.message), 0u);
  }
  op_diagnostic diag;
  EXPECT_EQ(model.diagnostic(OP_DIAGNOSTIC_ERROR, errors, &diag), OP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(model.diagnostic(7, 0, &diag), OP_STATUS_INVALID_ARGUMENT);

  // The resolver ignores the entry with its reason; a load never fails on it.
  api::Resolver resolver;
  ASSERT_EQ(api::Resolver::create(model, nullptr, &resolver), OP_STATUS_OK) << last();
  op_acceptable_format formats[8];
  size_t n = 0;
  ASSERT_EQ(op_builtin_formats(0, OP_DTYPE_FLOAT, 0, formats, 8, &n), OP_STATUS_OK);
  op_resolution res;
  ASSERT_EQ(resolver.resolve("W1", formats, n, &res), OP_STATUS_OK) << last();
  EXPECT_EQ(res.hit, 0);
  EXPECT_STREQ(res.reason, "bad_device_index");
  ASSERT_EQ(resolver.resolve("W2", formats, n, &res), OP_STATUS_OK);
  EXPECT_STREQ(res.reason, "not_found");
}

TEST(CApi, ResolverOptionsAndFormatsAreChecked) {
  TempDir dir;
  api::Model model;
  ASSERT_EQ(api::Model::open(write_mlp(dir).c_str(), &model), OP_STATUS_OK);
  api::Resolver r;
  op_resolver_options o = op_resolver_options_default();
  o.verify = 9;
  EXPECT_EQ(api::Resolver::create(model, &o, &r), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last().find("verify policy 9"), std::string::npos) << last();
  o = op_resolver_options_default();
  o.n_fed_inputs = 2;
  EXPECT_EQ(api::Resolver::create(model, &o, &r), OP_STATUS_INVALID_ARGUMENT);
  o = op_resolver_options_default();
  o.architecture = "sparc64-vis";
  EXPECT_NE(api::Resolver::create(model, &o, &r), OP_STATUS_OK);
  EXPECT_NE(last().find("architecture"), std::string::npos) << last();
  EXPECT_FALSE(r);

  ASSERT_EQ(api::Resolver::create(model, nullptr, &r), OP_STATUS_OK);
  op_acceptable_format bad{nullptr, "1", nullptr, nullptr, nullptr};
  op_resolution res;
  EXPECT_EQ(r.resolve("W1", &bad, 1, &res), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last().find("formats[0]"), std::string::npos);
  EXPECT_EQ(r.resolve("W1", nullptr, 3, &res), OP_STATUS_INVALID_ARGUMENT);
  // A caller's own format: no entry, so not_found; with an empty list the
  // consumer reads nothing.
  op_acceptable_format mine{"my_runtime_b_panels", "3", nullptr, nullptr, nullptr};
  ASSERT_EQ(r.resolve("W1", &mine, 1, &res), OP_STATUS_OK);
  EXPECT_EQ(res.hit, 0);
  ASSERT_EQ(r.resolve("W1", nullptr, 0, &res), OP_STATUS_OK);
  EXPECT_STREQ(res.reason, "no_acceptable_format");
  // Storing a foreign format needs its type; a non-proto is refused.
  const uint64_t dims[1] = {1};
  const uint8_t payload[4] = {0, 0, 0, 0};
  EXPECT_EQ(r.store("W1", mine, dims, 1, payload, 4), OP_STATUS_NOT_FOUND);
  const uint8_t junk[3] = {0xff, 0xff, 0xff};
  EXPECT_EQ(op_resolver_store(r.get(), "W1", &mine, junk, 3, dims, 1, payload, 4),
            OP_STATUS_INVALID_ARGUMENT);
}

TEST(CApi, SessionInputErrors) {
  TempDir dir;
  api::Session s;
  ASSERT_EQ(api::Session::create(write_mlp(dir).c_str(), nullptr, &s), OP_STATUS_OK) << last();
  std::vector<float> x(2 * 8, 0.5f);
  int64_t dims[2] = {2, 8};
  op_input in{"x", OP_DTYPE_FLOAT, x.data(), dims, 2};
  op_input twice[2] = {in, in};
  EXPECT_EQ(s.run(twice, 2), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last().find("fed twice"), std::string::npos) << last();
  int64_t wrong[2] = {2, 9};
  op_input bad = in;
  bad.dims = wrong;
  EXPECT_EQ(s.run(&bad, 1), OP_STATUS_INVALID_ARGUMENT) << last();
  EXPECT_NE(last().find("shape [2, 9], the graph declares"), std::string::npos) << last();
  int64_t negative[2] = {-2, 8};
  bad.dims = negative;
  EXPECT_EQ(s.run(&bad, 1), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last().find("negative"), std::string::npos) << last();
  bad = in;
  bad.data = nullptr;
  EXPECT_EQ(s.run(&bad, 1), OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last().find("data is null"), std::string::npos) << last();
  bad = in;
  bad.dtype = 8;  // string
  EXPECT_EQ(s.run(&bad, 1), OP_STATUS_INVALID_ARGUMENT);
  bad = in;
  std::vector<int64_t> ids(2 * 8, 1);
  bad.dtype = OP_DTYPE_INT64;  // the graph declares float
  bad.data = ids.data();
  EXPECT_EQ(s.run(&bad, 1), OP_STATUS_INVALID_ARGUMENT) << last();
  // Still usable after the errors, and reshaping plans again.
  ASSERT_EQ(s.run(&in, 1), OP_STATUS_OK) << last();
  op_tensor_view v;
  ASSERT_EQ(s.output(0, &v), OP_STATUS_OK);
  EXPECT_EQ(v.dims[0], 2);
  std::vector<float> x5(5 * 8, 0.25f);
  int64_t dims5[2] = {5, 8};
  op_input in5{"x", 0, x5.data(), dims5, 2};
  ASSERT_EQ(s.run(&in5, 1), OP_STATUS_OK) << last();
  ASSERT_EQ(s.output(0, &v), OP_STATUS_OK);
  EXPECT_EQ(v.dims[0], 5);
  EXPECT_EQ(v.nbytes, 5u * 4u * sizeof(float));
  EXPECT_EQ(s.output(1, &v), OP_STATUS_OUT_OF_RANGE);
  size_t nw = 0;
  ASSERT_EQ(s.weight_count(&nw), OP_STATUS_OK);
  EXPECT_EQ(nw, 2u);  // W1, W2 asked once each despite the new plan
  op_session_options so = op_session_options_default();
  so.n_threads = 5000;
  api::Session s2;
  EXPECT_EQ(api::Session::create(dir.file("mlp.onnx").c_str(), &so, &s2),
            OP_STATUS_INVALID_ARGUMENT);
  so = op_session_options_default();
  EXPECT_EQ(so.float16_float_chains, 0);
  so.float16_float_chains = 2;
  EXPECT_EQ(api::Session::create(dir.file("mlp.onnx").c_str(), &so, &s2),
            OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last().find("float16_float_chains must be 0 or 1, got 2"), std::string::npos) << last();
  so.float16_float_chains = 1;  // a float model runs the same
  EXPECT_EQ(api::Session::create(dir.file("mlp.onnx").c_str(), &so, &s2), OP_STATUS_OK) << last();
}

}  // namespace
}  // namespace onnx_prepack
