// Runs a format's decoder in ONNX Runtime (tests/pack/run_decoder.js) on the
// leaves of a real pack: the decoder's nodes become a graph whose initializers
// are the leaves, named like the decoder's inputs. Shared by the format tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx_prepack.pb.h"
#include "testing/test_models.h"
#include "types/struct_type.h"

namespace onnx_prepack::pack::testing_support {

inline std::string ort_dir() {
  return std::string(OP_SOURCE_DIR) + "/tools/peers/node_modules/onnxruntime-node";
}

// The raw bytes of the decoder's output (element type `out_elem`); empty with a
// test failure recorded when ONNX Runtime could not run it.
inline std::string run_decoder_in_ort(const onnx::FunctionProto& dec,
                                      const std::vector<types::LeafTensor>& leaves, int opset,
                                      int32_t out_elem, onnx_prepack::testing::TempDir& dir,
                                      const std::string& name) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("decode");
  for (const auto& node : dec.node()) *g->add_node() = node;
  EXPECT_EQ(leaves.size(), size_t(dec.input_size()));
  for (size_t i = 0; i < leaves.size() && int(i) < dec.input_size(); ++i) {
    const auto& leaf = leaves[i];
    auto* init = g->add_initializer();
    init->set_name(dec.input(int(i)));
    init->set_data_type(leaf.elem_type);
    for (uint64_t d : leaf.dims) init->add_dims(int64_t(d));
    init->set_raw_data(leaf.data.data(), leaf.data.size());
  }
  auto* out = g->add_output();
  out->set_name(dec.output(0));
  out->mutable_type()->mutable_tensor_type()->set_elem_type(out_elem);
  const std::string model_path = dir.file(name + ".onnx");
  const std::string out_path = dir.file(name + ".out");
  onnx_prepack::testing::write_bytes(model_path, m.SerializeAsString());
  std::string log;
  const int rc = onnx_prepack::testing::run_command("node " + std::string(OP_SOURCE_DIR) +
                                                        "/tests/pack/run_decoder.js " + ort_dir() +
                                                        " " + model_path + " " + out_path,
                                                    &log);
  EXPECT_EQ(rc, 0) << log;
  if (rc != 0) return "";
  return onnx_prepack::testing::read_bytes(out_path);
}

}  // namespace onnx_prepack::pack::testing_support
