#include "format/model_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "format/model.h"
#include "testing/test_models.h"

namespace onnx_prepack::format {
namespace {

using testing::TempDir;

TEST(ModelWriter, LargeTensorsAndPayloadsGoExternalAligned) {
  TempDir dir;
  auto m = testing::make_mlp(64, 128, 32, 5);  // W1 32 KiB, W2 16 KiB, biases < 1 KiB
  auto* ct = m.add_compiled_tensors();
  ct->set_source_name("W1");
  ct->mutable_value()->set_raw_data(std::string(5000, '\x7'));
  const std::string w1_before = m.graph().initializer(0).raw_data();
  WriteOptions opt;
  auto rep = write_model(m, dir.file("m.onnx"), opt, nullptr);
  ASSERT_TRUE(rep.ok()) << rep.status().to_string();
  EXPECT_EQ(rep->data_file, "m.onnx.data");
  EXPECT_EQ(rep->tensors_external, 2u);
  EXPECT_EQ(rep->payloads_external, 1u);

  auto model = Model::load(dir.file("m.onnx"));
  ASSERT_TRUE(model.ok());
  const auto& g = (*model)->proto().graph();
  for (int i = 0; i < g.initializer_size(); ++i) {
    const auto& t = g.initializer(i);
    auto b = (*model)->tensor_bytes(t, t.name());
    ASSERT_TRUE(b.ok());
    if (t.name() == "W1" || t.name() == "W2") {
      EXPECT_EQ(b->storage, Storage::kExternal);
      EXPECT_EQ(b->file_offset % 4096, 0u) << t.name();
    } else {
      EXPECT_EQ(b->storage, Storage::kRaw);
    }
    if (t.name() == "W1") {
      EXPECT_EQ(std::string(b->bytes.begin(), b->bytes.end()), w1_before);
    }
  }
  const auto& v = (*model)->proto().compiled_tensors(0).value();
  auto span = (*model)->resolve_external(v.external_data(), "compiled_tensors[0].value");
  ASSERT_TRUE(span.ok());
  EXPECT_EQ(span->offset % 4096, 0u);
  EXPECT_EQ(span->length, 5000u);
  EXPECT_EQ(span->bytes()[4999], 7);
}

TEST(ModelWriter, RewritingKeepsContentAndReferencesExistingDataInSameFolder) {
  TempDir dir;
  auto m = testing::make_mlp(64, 64, 64, 9);
  auto rep = write_model(m, dir.file("a.onnx"), WriteOptions{}, nullptr);
  ASSERT_TRUE(rep.ok());
  auto a = Model::load(dir.file("a.onnx"));
  ASSERT_TRUE(a.ok());
  onnx::ModelProto copy = (*a)->proto();
  auto rep2 = write_model(copy, dir.file("b.onnx"), WriteOptions{}, a->get());
  ASSERT_TRUE(rep2.ok()) << rep2.status().to_string();
  EXPECT_EQ(rep2->tensors_referenced, 2u);  // W1 and W2 still point at a.onnx.data
  EXPECT_TRUE(rep2->data_file.empty());
  auto b = Model::load(dir.file("b.onnx"));
  ASSERT_TRUE(b.ok());
  auto wa = (*a)->tensor_bytes(*(*a)->find_initializer("W2"), "W2");
  auto wb = (*b)->tensor_bytes(*(*b)->find_initializer("W2"), "W2");
  ASSERT_TRUE(wa.ok() && wb.ok());
  EXPECT_TRUE(std::equal(wa->bytes.begin(), wa->bytes.end(), wb->bytes.begin(), wb->bytes.end()));
}

TEST(ModelWriter, CopiesExternalDataWhenWritingToAnotherFolder) {
  TempDir src, dst;
  auto m = testing::make_mlp(64, 64, 64, 11);
  ASSERT_TRUE(write_model(m, src.file("a.onnx"), WriteOptions{}, nullptr).ok());
  auto a = Model::load(src.file("a.onnx"));
  ASSERT_TRUE(a.ok());
  onnx::ModelProto copy = (*a)->proto();
  auto rep = write_model(copy, dst.file("b.onnx"), WriteOptions{}, a->get());
  ASSERT_TRUE(rep.ok());
  EXPECT_EQ(rep->tensors_external, 2u);
  auto b = Model::load(dst.file("b.onnx"));
  ASSERT_TRUE(b.ok());
  auto wb = (*b)->tensor_bytes(*(*b)->find_initializer("W1"), "W1");
  ASSERT_TRUE(wb.ok());
  EXPECT_EQ(wb->location, "b.onnx.data");
  EXPECT_EQ(wb->bytes.size(), 64u * 64u * 4u);
}

TEST(ModelWriter, FailedWriteLeavesNoPartialFile) {
  auto m = testing::make_mlp(8, 8, 8, 1);
  auto rep = write_model(m, "/nonexistent-dir/x.onnx", WriteOptions{}, nullptr);
  EXPECT_FALSE(rep.ok());
}

}  // namespace
}  // namespace onnx_prepack::format

namespace onnx_prepack::format {
namespace {

TEST(ModelWriter, ProducedPayloadsAreWrittenOneAtATimeAndErrorsNameTheEntry) {
  testing::TempDir dir;
  auto m = testing::make_mlp(64, 64, 8, 3);
  for (int i = 0; i < 2; ++i) m.add_compiled_tensors()->set_source_name("W1");
  WriteOptions opt;
  int calls = 0;
  for (int i = 0; i < 2; ++i) {
    opt.lazy_payloads[i] = {uint64_t(5000 + i), [i, &calls](std::span<uint8_t> dst) {
                              ++calls;
                              for (uint8_t b : dst) EXPECT_EQ(b, 0);  // handed over zeroed
                              std::fill(dst.begin(), dst.end(), uint8_t(0x30 + i));
                              return ok_status();
                            }};
  }
  auto rep = write_model(m, dir.file("m.onnx"), opt, nullptr);
  ASSERT_TRUE(rep.ok()) << rep.status().to_string();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(rep->payloads_external, 2u);
  auto model = Model::load(dir.file("m.onnx"));
  ASSERT_TRUE(model.ok());
  for (int i = 0; i < 2; ++i) {
    auto span = (*model)->resolve_external(
        (*model)->proto().compiled_tensors(i).value().external_data(), "p");
    ASSERT_TRUE(span.ok());
    EXPECT_EQ(span->offset % 4096, 0u);
    ASSERT_EQ(span->length, uint64_t(5000 + i));
    EXPECT_EQ(span->bytes()[4999], 0x30 + i);
  }

  auto m2 = testing::make_mlp(8, 8, 8, 3);
  m2.add_compiled_tensors()->set_source_name("W1");
  WriteOptions bad;
  bad.lazy_payloads[0] = {16, [](std::span<uint8_t>) { return data_loss("source went away"); }};
  auto failed = write_model(m2, dir.file("bad.onnx"), bad, nullptr);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "compiled_tensors[0].value: source went away");
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad.onnx")));
}

}  // namespace
}  // namespace onnx_prepack::format
