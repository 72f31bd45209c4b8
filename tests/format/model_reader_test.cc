#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "format/model.h"
#include "format/model_writer.h"
#include "testing/test_models.h"

namespace onnx_prepack::format {
namespace {

using testing::TempDir;

std::string serialize(const onnx::ModelProto& m) {
  std::string s;
  EXPECT_TRUE(m.SerializeToString(&s));
  return s;
}

onnx::TensorProto external_tensor(const std::string& name, const std::string& location,
                                  int64_t offset, int64_t length, std::vector<int64_t> dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t.add_dims(d);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  return t;
}

TEST(ModelReader, ReadsInlineRawTensorWithoutCopy) {
  TempDir dir;
  auto m = testing::make_mlp(8, 16, 4, 1);
  testing::write_bytes(dir.file("m.onnx"), serialize(m));
  auto model = Model::load(dir.file("m.onnx"));
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const auto* w1 = (*model)->find_initializer("W1");
  ASSERT_NE(w1, nullptr);
  auto bytes = (*model)->tensor_bytes(*w1, "W1");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->storage, Storage::kRaw);
  EXPECT_EQ(bytes->bytes.size(), 8u * 16u * 4u);
  // The span points into the parsed message, not a copy.
  EXPECT_EQ(static_cast<const void*>(bytes->bytes.data()),
            static_cast<const void*>(w1->raw_data().data()));
}

TEST(ModelReader, ReadsExternalDataAsMappedSpan) {
  TempDir dir;
  std::vector<float> values = testing::pseudo_random_floats(64, 3);
  std::string data(4096, '\0');
  data.append(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  testing::write_bytes(dir.file("w.bin"), data);
  auto m = testing::make_mlp(8, 8, 8, 1);
  *m.mutable_graph()->mutable_initializer(0) = external_tensor("W1", "w.bin", 4096, 256, {8, 8});
  testing::write_bytes(dir.file("m.onnx"), serialize(m));
  auto model = Model::load(dir.file("m.onnx"));
  ASSERT_TRUE(model.ok());
  auto bytes = (*model)->tensor_bytes((*model)->proto().graph().initializer(0), "W1");
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  EXPECT_EQ(bytes->storage, Storage::kExternal);
  ASSERT_EQ(bytes->bytes.size(), 256u);
  EXPECT_EQ(0, std::memcmp(bytes->bytes.data(), values.data(), 256));
  EXPECT_EQ(bytes->file_offset, 4096u);
}

struct BadExternalCase {
  const char* label;
  std::string location;
  int64_t offset;
  int64_t length;
  const char* expected;
};

TEST(ModelReader, BadExternalDataIsAClearErrorNamingTheTensor) {
  TempDir dir;
  testing::write_bytes(dir.file("w.bin"), std::string(1000, 'x'));
  std::filesystem::create_directories(dir.file("sub"));
  const BadExternalCase cases[] = {
      {"absolute", "/etc/passwd", 0, 10, "is absolute"},
      {"dotdot", "../w.bin", 0, 10, "escapes the model's folder"},
      {"nested dotdot", "sub/../../w.bin", 0, 10, "escapes the model's folder"},
      {"missing", "nope.bin", 0, 10, "cannot open"},
      {"offset past end", "w.bin", 2000, 10, "offset 2000 is past the end of 'w.bin' (1000 bytes)"},
      {"length past end", "w.bin", 900, 200, "offset 900 + length 200 is past the end of 'w.bin'"},
      {"empty location", "", 0, 10, "no location"},
  };
  for (const auto& c : cases) {
    auto m = testing::make_mlp(8, 8, 8, 1);
    *m.mutable_graph()->mutable_initializer(0) =
        external_tensor("W1", c.location, c.offset, c.length, {8, 8});
    std::string bytes = serialize(m);
    auto parsed =
        Model::parse({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, dir.path());
    ASSERT_TRUE(parsed.ok()) << c.label;
    const auto& t = (*parsed)->proto().graph().initializer(0);
    auto r = (*parsed)->tensor_bytes(t, tensor_context(0, t.name()));
    ASSERT_FALSE(r.ok()) << c.label;
    EXPECT_NE(r.status().message().find("initializers[0] 'W1'"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos)
        << c.label << ": " << r.status().message();
  }
}

TEST(ModelReader, NonNumericOffsetIsRejected) {
  auto m = testing::make_mlp(8, 8, 8, 1);
  auto t = external_tensor("W1", "w.bin", -1, -1, {8, 8});
  auto* e = t.add_external_data();
  e->set_key("offset");
  e->set_value("12abc");
  *m.mutable_graph()->mutable_initializer(0) = t;
  auto parsed = Model::from_proto(m, "/nonexistent");
  auto r = parsed->tensor_bytes(parsed->proto().graph().initializer(0), "W1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a non-negative integer"), std::string::npos);
}

TEST(ModelReader, TruncatedAndGarbageInputsAreErrorsNotCrashes) {
  auto m = testing::make_mlp(32, 32, 8, 2);
  std::string bytes = serialize(m);
  for (size_t cut : {size_t(1), size_t(7), bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
    auto r = Model::parse({reinterpret_cast<const uint8_t*>(bytes.data()), cut}, ".");
    EXPECT_FALSE(r.ok()) << "cut at " << cut;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
    }
  }
  std::string garbage(4096, '\0');
  uint32_t s = 12345;
  for (auto& c : garbage) {
    s = s * 1103515245u + 12345u;
    c = char(s >> 24);
  }
  auto r = Model::parse({reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size()}, ".");
  EXPECT_FALSE(r.ok());
}

TEST(ModelReader, MissingFileIsNotFound) {
  auto r = Model::load("/nonexistent/model.onnx");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(ModelReader, ConstantNodeTensorsAreVisible) {
  auto m = testing::make_mlp(4, 4, 4, 1);
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("Constant");
  n->add_output("c0");
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = testing::float_tensor("c0", {3}, {1, 2, 3});
  auto model = Model::from_proto(m, ".");
  auto consts = model->constant_tensors();
  ASSERT_EQ(consts.size(), 1u);
  EXPECT_EQ(consts[0].output, "c0");
  EXPECT_EQ(consts[0].tensor->raw_data().size(), 12u);
}

TEST(ModelReader, UnknownFieldsSurviveReadModifyWrite) {
  auto m = testing::make_mlp(4, 4, 4, 1);
  std::string bytes = serialize(m);
  // Field 19999 (varint 42) and field 20050 (length-delimited "hi") are unknown to us.
  auto varint = [](std::string& out, uint64_t v) {
    while (v >= 0x80) {
      out.push_back(char(v | 0x80));
      v >>= 7;
    }
    out.push_back(char(v));
  };
  std::string extra;
  varint(extra, (19999u << 3) | 0);
  varint(extra, 42);
  varint(extra, (20050u << 3) | 2);
  varint(extra, 2);
  extra += "hi";
  bytes += extra;
  TempDir dir;
  testing::write_bytes(dir.file("in.onnx"), bytes);
  auto model = Model::load(dir.file("in.onnx"));
  ASSERT_TRUE(model.ok());
  (*model)->proto().set_producer_name("modified");
  WriteOptions opt;
  auto rep = write_model((*model)->proto(), dir.file("out.onnx"), opt, model->get());
  ASSERT_TRUE(rep.ok()) << rep.status().to_string();
  std::string out = testing::read_bytes(dir.file("out.onnx"));
  EXPECT_NE(out.find(extra), std::string::npos);
}

}  // namespace
}  // namespace onnx_prepack::format
