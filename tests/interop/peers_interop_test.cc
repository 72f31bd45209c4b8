// Interop with the real peers: a model carrying devices, struct_types and
// compiled_tensors written by our code loads in Debian's python3-onnx, passes
// onnx.checker and keeps the extension through onnx's load/save, and runs in
// ONNX Runtime with outputs identical to the same model without the extension.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "format/model.h"
#include "format/model_writer.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

using testing::TempDir;

// A hand-made extension: one catalogue type (FLOAT array with a dims
// parameter), one device, one compiled entry for W1 with an external payload.
void add_extension(onnx::ModelProto& m) {
  auto* type = m.add_struct_types();
  type->set_name("test.f32_copy");
  type->add_dims_param("n");
  auto* arr = type->mutable_array();
  arr->set_dims_index(0);
  arr->mutable_element_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* md = type->add_metadata_props();
  md->set_key("format_version");
  md->set_value("1");

  auto* dev = m.add_devices();
  dev->set_type("cpu");
  dev->set_architecture("x86_64-avx2-fma");
  dev->set_runtime("onnx-prepack");
  dev->set_runtime_version("1");

  const auto& w1 = m.graph().initializer(0);
  auto* ct = m.add_compiled_tensors();
  ct->set_source_name(w1.name());
  ct->set_device(0);
  ct->set_digest_algorithm("blake3");
  ct->set_source_digest(std::string(32, '\x5a'));
  auto* v = ct->mutable_value();
  v->set_type(0);
  v->add_dims(w1.raw_data().size() / 4);
  v->set_raw_data(w1.raw_data());
}

TEST(PeersInterop, PythonOnnxChecksAndKeepsTheExtension) {
  TempDir dir;
  auto m = testing::make_mlp(256, 512, 16, 21);
  add_extension(m);
  const onnx::ModelProto expected_ext = m;
  ASSERT_TRUE(format::write_model(m, dir.file("ext.onnx"), format::WriteOptions{}, nullptr).ok());

  std::string out;
  std::string cmd = "/usr/bin/python3 " OP_SOURCE_DIR "/tests/interop/onnx_check_and_resave.py ";
  cmd.append(dir.file("ext.onnx")).append(" ").append(dir.file("resaved.onnx"));
  int rc = testing::run_command(cmd, &out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ok ir_version=8"), std::string::npos) << out;

  auto original = format::Model::load(dir.file("ext.onnx"));
  auto resaved = format::Model::load(dir.file("resaved.onnx"));
  ASSERT_TRUE(original.ok() && resaved.ok());
  const auto& a = (*original)->proto();
  const auto& b = (*resaved)->proto();
  ASSERT_EQ(b.struct_types_size(), 1);
  ASSERT_EQ(b.devices_size(), 1);
  ASSERT_EQ(b.compiled_tensors_size(), 1);
  using google::protobuf::util::MessageDifferencer;
  EXPECT_TRUE(MessageDifferencer::Equals(a.struct_types(0), b.struct_types(0)));
  EXPECT_TRUE(MessageDifferencer::Equals(a.devices(0), b.devices(0)));
  EXPECT_TRUE(MessageDifferencer::Equals(a.compiled_tensors(0), b.compiled_tensors(0)));
  // And the payload is still readable through the resaved model.
  auto payload =
      (*resaved)->resolve_external(b.compiled_tensors(0).value().external_data(), "payload");
  ASSERT_TRUE(payload.ok()) << payload.status().to_string();
  EXPECT_EQ(payload->length, uint64_t(256 * 512 * 4));
  EXPECT_EQ(b.compiled_tensors(0).source_digest(),
            expected_ext.compiled_tensors(0).source_digest());
}

TEST(PeersInterop, OnnxRuntimeOutputsAreIdenticalWithAndWithoutExtension) {
  TempDir dir;
  auto plain = testing::make_mlp(256, 512, 16, 33);
  auto with_ext = plain;
  add_extension(with_ext);
  ASSERT_TRUE(
      format::write_model(plain, dir.file("plain.onnx"), format::WriteOptions{}, nullptr).ok());
  ASSERT_TRUE(
      format::write_model(with_ext, dir.file("ext.onnx"), format::WriteOptions{}, nullptr).ok());

  auto run = [&](const std::string& model) {
    std::string out;
    std::string cmd =
        "OP_PEERS_DIR=" OP_PEERS_DIR " node " OP_SOURCE_DIR "/tests/interop/ort_run.js ";
    cmd.append(model).append(" x:4x256");
    int rc = testing::run_command(cmd, &out);
    EXPECT_EQ(rc, 0) << out;
    return out;
  };
  std::string a = run(dir.file("plain.onnx"));
  std::string b = run(dir.file("ext.onnx"));
  ASSERT_NE(a.find("\"y\""), std::string::npos) << a;
  EXPECT_GT(a.size(), 4u * 16u * 8u);  // 64 floats as hex
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace onnx_prepack
