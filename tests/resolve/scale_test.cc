// Scale: the loading rules stay linear in the number of compiled entries.
// 100,000 entries name one source (every device but the last is another
// runtime version); the resolver (checker included) must examine them all and
// pick the one that matches. Quadratic work here (an entry compared with every
// other, a diagnostic searched per entry) takes minutes instead of a second.
#include <gtest/gtest.h>

#include <chrono>

#include "resolve/resolve_fixture.h"
#include "resolve/resolver.h"

namespace onnx_prepack::resolve {
namespace {

using namespace testing_fixture;

constexpr int kEntries = 100000;

onnx::ModelProto model_with_entries(int n) {
  onnx::ModelProto m = onnx_prepack::testing::make_mlp(8, 16, 4, 7);
  add_entry(m, {});  // the one that matches the host, copied below
  const onnx::CompiledTensorProto good = m.compiled_tensors(0);
  const onnx::DeviceProto good_device = m.devices(0);
  m.clear_compiled_tensors();
  m.clear_devices();
  for (int i = 0; i < n; ++i) {
    onnx::DeviceProto* d = m.add_devices();
    *d = good_device;
    if (i + 1 < n) d->set_runtime_version("old-" + std::to_string(i));
    onnx::CompiledTensorProto* ct = m.add_compiled_tensors();
    *ct = good;
    ct->set_device(i);
  }
  return m;
}

TEST(ResolverScale, HundredThousandEntriesForOneSource) {
  const onnx::ModelProto m = model_with_entries(kEntries);
  auto model = format::Model::from_proto(m, "");
  const auto t0 = std::chrono::steady_clock::now();
  Resolver r(*model, host(), {});
  const auto t1 = std::chrono::steady_clock::now();
  Resolution res = r.resolve(request("W1"));
  const auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(res.is_hit()) << res.detail;
  EXPECT_EQ(res.hit->entry, kEntries - 1);
  EXPECT_EQ(res.candidates.size(), size_t(kEntries));
  EXPECT_TRUE(r.diagnostics().empty());
  // Figures for the report (never asserted: performance lives in bench/).
  std::printf("[resolver scale] %d entries: checker+index %.1f ms, resolve %.1f ms\n", kEntries,
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count());
}

// Every entry but the last fails the checker (its payload is 4 bytes short):
// each rejection names its own diagnostic.
TEST(ResolverScale, HundredThousandInvalidEntries) {
  onnx::ModelProto m = model_with_entries(kEntries);
  for (int i = 0; i + 1 < kEntries; ++i) {
    std::string* raw = m.mutable_compiled_tensors(i)->mutable_value()->mutable_raw_data();
    raw->resize(raw->size() - 4);
  }
  auto model = format::Model::from_proto(m, "");
  const auto t0 = std::chrono::steady_clock::now();
  Resolver r(*model, host(), {});
  Resolution res = r.resolve(request("W1"));
  const auto t1 = std::chrono::steady_clock::now();
  ASSERT_TRUE(res.is_hit()) << res.detail;
  EXPECT_EQ(res.hit->entry, kEntries - 1);
  ASSERT_EQ(res.candidates.size(), size_t(kEntries));
  EXPECT_EQ(res.candidates[7].reason, MissReason::kInvalidEntry);
  EXPECT_NE(res.candidates[7].detail.find("compiled_tensors[7]"), std::string::npos)
      << res.candidates[7].detail;
  std::printf("[resolver scale] %d invalid entries: checker+resolve %.1f ms\n", kEntries,
              std::chrono::duration<double, std::milli>(t1 - t0).count());
}

}  // namespace
}  // namespace onnx_prepack::resolve
