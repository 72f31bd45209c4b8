// `onnx-prepack explain` end to end: a model carrying entries of the real pack
// formats (built here the way `compile` does) is a hit per weight under full
// and memo verification, and each induced miss shows its reason.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "device/device_match.h"
#include "digest/digest.h"
#include "format/model_writer.h"
#include "pack/format_list.h"
#include "resolve/payload_check.h"
#include "testing/test_models.h"

namespace onnx_prepack::resolve {
namespace {

using onnx_prepack::testing::run_command;
using onnx_prepack::testing::TempDir;

// Adds one entry per format that packs each MatMul B of the MLP.
void add_compiled_entries(onnx::ModelProto& m) {
  auto model = format::Model::from_proto(m, "");
  for (const char* name : {"W1", "W2"}) {
    const onnx::TensorProto& t = *model->find_initializer(name);
    const auto d = digest::digest_tensor(*model, t, name).value();
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(t.raw_data().data()),
                                         t.raw_data().size());
    for (const pack::GemmBFormat* f : pack::gemm_b_formats_for(
             kernels::PackSourceLayout::kKN, onnx::TensorProto::FLOAT, device::IsaLevel::kAvx512)) {
      const int64_t dims[] = {t.dims(0), t.dims(1)};
      auto src = pack::gemm_b_source(bytes, t.data_type(), dims, f->layout).value();
      std::vector<uint8_t> payload(pack::gemm_b_payload_bytes(*f, src.k, src.n));
      ASSERT_TRUE(pack::gemm_b_pack(*f, src, payload).ok());
      onnx::DeviceProto dev;
      dev.set_type("cpu");
      dev.set_architecture(std::string(f->architecture));
      dev.set_runtime(std::string(device::kRuntimeName));
      dev.set_runtime_version(std::string(device::kPackingAbiVersion));
      int di = -1;
      for (int i = 0; i < m.devices_size(); ++i) {
        if (m.devices(i).architecture() == dev.architecture()) di = i;
      }
      if (di < 0) {
        *m.add_devices() = dev;
        di = m.devices_size() - 1;
      }
      int ti = -1;
      for (int i = 0; i < m.struct_types_size(); ++i) {
        if (m.struct_types(i).name() == f->name) ti = i;
      }
      if (ti < 0) {
        *m.add_struct_types() = pack::gemm_b_struct_type(*f);
        ti = m.struct_types_size() - 1;
      }
      onnx::CompiledTensorProto* ct = m.add_compiled_tensors();
      ct->set_source_name(name);
      ct->set_device(di);
      ct->set_digest_algorithm("blake3");
      ct->set_source_digest(std::string(reinterpret_cast<const char*>(d.digest.data()), 32));
      ct->mutable_value()->set_type(ti);
      for (uint64_t x : pack::gemm_b_dims(*f, src.k, src.n)) ct->mutable_value()->add_dims(x);
      ct->mutable_value()->set_raw_data(std::string(payload.begin(), payload.end()));
      resolve::set_payload_digest(*ct, m.struct_types(ti), digest::Algorithm::kBlake3, payload);
    }
  }
}

std::string compiled_model(const TempDir& dir) {
  onnx::ModelProto m = onnx_prepack::testing::make_mlp(40, 72, 24, 3);
  add_compiled_entries(m);
  const std::string path = dir.file("compiled.onnx");
  format::WriteOptions wo;
  EXPECT_TRUE(format::write_model(m, path, wo, nullptr).ok());
  return path;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string explain(const std::string& args, int* rc = nullptr) {
  std::string out;
  const int status = run_command(std::string(OP_CLI_PATH) + " explain " + args + " 2>&1", &out);
  if (rc) *rc = status;
  return out;
}

TEST(ExplainCli, EveryWeightHitsWithFullAndMemo) {
  TempDir dir;
  const std::string model = compiled_model(dir);
  const std::string arch = " --arch x86_64-v4 ";
  std::string out = explain(model + arch + "--json");
  EXPECT_EQ(count(out, "\"decision\": \"hit\""), 2u) << out;
  EXPECT_NE(out.find("\"host\""), std::string::npos);
  EXPECT_NE(out.find("\"totals\""), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the timestamp granularity
  const std::string memo = " --verify memo --memo-dir " + dir.file("memo") + " ";
  out = explain(model + arch + memo + "--json");
  EXPECT_EQ(count(out, "\"decision\": \"hit\""), 2u) << out;
  EXPECT_EQ(count(out, "\"memo_used\": false"), 2u) << out;
  out = explain(model + arch + memo + "--json");
  EXPECT_EQ(count(out, "\"decision\": \"hit\""), 2u) << out;
  EXPECT_EQ(count(out, "\"memo_used\": true"), 2u) << out;
  EXPECT_NE(out.find("\"bytes_hashed\": 0,\n    \"bytes_to_pack\""), std::string::npos) << out;
  out = explain(model + arch + "--verify off");
  EXPECT_NE(out.find("unverified"), std::string::npos) << out;
}

TEST(ExplainCli, InducedMissesShowTheirReason) {
  TempDir dir;
  const std::string model = compiled_model(dir);
  // A host without AVX-512: the n32 entries are for another ISA, n16 hits.
  std::string out = explain(model + " --arch x86_64-v3 --json");
  EXPECT_EQ(count(out, "\"decision\": \"hit\""), 2u) << out;
  EXPECT_GE(count(out, "\"reason\": \"incompatible_device\""), 2u) << out;
  // A host without AVX2: nothing to read these formats with.
  out = explain(model + " --arch x86_64 --json");
  EXPECT_EQ(count(out, "\"decision\": \"miss\""), 2u) << out;
  // A fed graph input overrides the initializer.
  out = explain(model + " --arch x86_64-v4 --input W1 --json");
  EXPECT_EQ(count(out, "\"reason\": \"overridden_by_input\""), 3u) << out;  // weight + 2 entries
  int rc = 0;
  explain(model + " --arch x86_64-v4 --input W1 --fail-on-miss", &rc);
  EXPECT_NE(rc, 0);
  // Usage errors.
  explain(model + " --verify sometimes", &rc);
  EXPECT_NE(rc, 0);
  explain(model + " --arch sparc64", &rc);
  EXPECT_NE(rc, 0);
}

TEST(ExplainCli, StaleAfterPythonOnnxEdit) {
  TempDir dir;
  const std::string model = compiled_model(dir);
  const std::string script = dir.file("edit.py");
  std::ofstream(script) << "import sys, onnx\n"
                           "from onnx import numpy_helper\n"
                           "m = onnx.load(sys.argv[1])\n"
                           "for t in m.graph.initializer:\n"
                           "    if t.name == 'W2':\n"
                           "        a = numpy_helper.to_array(t).copy()\n"
                           "        a.flat[0] = -a.flat[0] - 1.0\n"
                           "        t.CopyFrom(numpy_helper.from_array(a, 'W2'))\n"
                           "onnx.save(m, sys.argv[2])\n";
  std::string out;
  ASSERT_EQ(
      run_command("/usr/bin/python3 " + script + " " + model + " " + dir.file("edited.onnx"), &out),
      0)
      << out;
  out = explain(dir.file("edited.onnx") + " --arch x86_64-v4 --json");
  EXPECT_EQ(count(out, "\"decision\": \"hit\""), 1u) << out;
  EXPECT_NE(out.find("\"reason\": \"stale_digest\""), std::string::npos) << out;
}

}  // namespace
}  // namespace onnx_prepack::resolve
