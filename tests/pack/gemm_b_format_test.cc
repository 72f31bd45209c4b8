// GEMM B formats: every byte described, golden fingerprints, decoders run in
// ONNX Runtime, host-independent packing, and bit-identical GEMM from a pack
// read back from disk.
#include "pack/gemm_b_format.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "decoder_in_ort.h"
#include "device/cpu_features.h"
#include "kernels/f32_gemm/f32_gemm.h"
#include "pack/format_list.h"
#include "pack/pack_family.h"
#include "testing/test_models.h"
#include "types/codec.h"
#include "types/struct_type.h"

namespace onnx_prepack::pack {
namespace {

using kernels::PackSourceLayout;

uint64_t fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// Deterministic source bytes: FLOAT in [-1, 1) or finite FLOAT16 patterns.
std::vector<uint8_t> source_bytes(int32_t type, size_t count, uint32_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(x >> 32);
  };
  std::vector<uint8_t> out(count * (type == onnx::TensorProto::FLOAT16 ? 2 : 4));
  for (size_t i = 0; i < count; ++i) {
    if (type == onnx::TensorProto::FLOAT16) {
      uint16_t h = uint16_t(next());
      if ((h & 0x7c00) == 0x7c00) h &= 0xbfff;  // no inf / nan
      std::memcpy(&out[i * 2], &h, 2);
    } else {
      const float f = float(next() >> 8) / float(1 << 23) - 1.0f;
      std::memcpy(&out[i * 4], &f, 4);
    }
  }
  return out;
}

std::vector<int64_t> source_dims(const GemmBFormat& f, size_t k, size_t n) {
  return f.layout == PackSourceLayout::kKN ? std::vector<int64_t>{int64_t(k), int64_t(n)}
                                           : std::vector<int64_t>{int64_t(n), int64_t(k)};
}

std::vector<uint8_t> pack_of(const GemmBFormat& f, const std::vector<uint8_t>& src, size_t k,
                             size_t n) {
  const auto dims = source_dims(f, k, n);
  auto s = gemm_b_source(src, f.source_type, dims, f.layout);
  EXPECT_TRUE(s.ok()) << s.status().message();
  std::vector<uint8_t> out(gemm_b_payload_bytes(f, k, n), 0xAB);
  const Status st = gemm_b_pack(f, *s, out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

class GemmBFormatTest : public ::testing::TestWithParam<const GemmBFormat*> {};

TEST_P(GemmBFormatTest, TypeDescribesEveryByteForManyShapes) {
  const GemmBFormat& f = *GetParam();
  const onnx::StructTypeProto t = gemm_b_struct_type(f);
  EXPECT_EQ(t.name(), f.name);
  ASSERT_EQ(t.metadata_props(0).key(), "format_version");
  EXPECT_EQ(t.metadata_props(0).value(), f.version);
  types::Catalogue none;
  for (size_t k : {1, 5, 64}) {
    for (size_t n : {1, 15, 16, 17, 32, 33, 100}) {
      const auto dims = gemm_b_dims(f, k, n);
      auto bits = types::struct_type_bits(none, t, dims);
      ASSERT_TRUE(bits.ok()) << bits.status().message();
      EXPECT_EQ(*bits, gemm_b_payload_bytes(f, k, n) * 8) << "k=" << k << " n=" << n;
      // Padding is a leaf of its own and always zero.
      const auto src = source_bytes(f.source_type, k * n, 3);
      const auto packed = pack_of(f, src, k, n);
      auto leaves = types::read_leaves(none, t, dims, packed);
      ASSERT_TRUE(leaves.ok()) << leaves.status().message();
      ASSERT_EQ(leaves->size(), 3u);
      EXPECT_EQ((*leaves)[2].name, "tail.padding");
      for (uint8_t byte : (*leaves)[2].data) ASSERT_EQ(byte, 0);
      EXPECT_EQ((*leaves)[2].data.size(), k * dims[3] * 4);
    }
  }
}

TEST_P(GemmBFormatTest, DecoderSignatureMatchesTheLeaves) {
  const GemmBFormat& f = *GetParam();
  const onnx::StructTypeProto t = gemm_b_struct_type(f);
  types::Catalogue none;
  auto sig = types::leaf_signature(none, t);
  ASSERT_TRUE(sig.ok()) << sig.status().message();
  const auto problems = types::check_decoder(t.decoder(), *sig, "decoder");
  for (const auto& p : problems) ADD_FAILURE() << p.path << ": " << p.message;
}

// Golden fingerprints (format.md §6): FNV-1a 64 of packing a fixed pseudo-random
// 37 x 75 source. A change here changes packed bytes: bump format_version (and
// the packing ABI version) before updating the value.
TEST_P(GemmBFormatTest, GoldenFingerprint) {
  static const std::map<std::string, uint64_t> kGolden = {
      {"f32_gemm_b_n32_kn_f32", 0x9660115bf9ec952aull},
      {"f32_gemm_b_n32_nk_f32", 0xb22d089613b7e92eull},
      {"f32_gemm_b_n32_kn_f16", 0x16a12b057563a224ull},
      {"f32_gemm_b_n32_nk_f16", 0x1eebabdd9f3b8668ull},
      {"f32_gemm_b_n16_kn_f32", 0x4f7c5dc176fcd7feull},
      {"f32_gemm_b_n16_nk_f32", 0x98f9b7a43fa6a136ull},
      {"f32_gemm_b_n16_kn_f16", 0x2638062921070f94ull},
      {"f32_gemm_b_n16_nk_f16", 0xe1c40b62febb804cull},
      {"f32_gemm_b_n12_kn_f32", 0x0e82cf393a94e6aeull},
      {"f32_gemm_b_n12_nk_f32", 0xf5ec652c7c1fc636ull},
      {"f32_gemm_b_n12_kn_f16", 0x771de695fdf1d050ull},
      {"f32_gemm_b_n12_nk_f16", 0x28144236c6a76c4cull},
  };
  const GemmBFormat& f = *GetParam();
  const auto src = source_bytes(f.source_type, 37 * 75, 42);
  const auto packed = pack_of(f, src, 37, 75);
  const uint64_t h = fnv1a64(packed.data(), packed.size());
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%016llxull", static_cast<unsigned long long>(h));
  ASSERT_TRUE(kGolden.count(std::string(f.name))) << f.name;
  EXPECT_EQ(h, kGolden.at(std::string(f.name))) << "{\"" << f.name << "\", " << hex << "},";
}

TEST_P(GemmBFormatTest, PackBytesDoNotDependOnTheHostIsa) {
  const GemmBFormat& f = *GetParam();
  const auto src = source_bytes(f.source_type, 29 * 70, 7);
  const auto native = pack_of(f, src, 29, 70);
  device::set_max_isa(device::IsaLevel::kRef);
  const auto portable = pack_of(f, src, 29, 70);
  device::set_max_isa(std::nullopt);
  EXPECT_EQ(native, portable);
}

// The decoder, run by ONNX Runtime on the leaves of a real pack, gives the
// source back bit for bit.
TEST_P(GemmBFormatTest, DecoderRunsInOnnxRuntime) {
  const std::string ort_dir = testing_support::ort_dir();
  // A real peer, never skipped: tools/setup.sh installs it.
  ASSERT_TRUE(std::filesystem::exists(ort_dir)) << "no " << ort_dir << ": run tools/setup.sh";
  const GemmBFormat& f = *GetParam();
  testing::TempDir dir;
  for (auto [k, n] : {std::pair<size_t, size_t>{37, 75}, {5, 8}, {3, 64}}) {
    const auto src = source_bytes(f.source_type, k * n, 9);
    const auto packed = pack_of(f, src, k, n);
    const onnx::StructTypeProto t = gemm_b_struct_type(f);
    types::Catalogue none;
    auto leaves = types::read_leaves(none, t, gemm_b_dims(f, k, n), packed);
    ASSERT_TRUE(leaves.ok()) << leaves.status().message();
    const std::string got = testing_support::run_decoder_in_ort(
        t.decoder(), *leaves, 13, f.source_type, dir, std::string(f.name));
    ASSERT_EQ(got.size(), src.size());
    EXPECT_EQ(0, std::memcmp(got.data(), src.data(), src.size()))
        << f.name << " k=" << k << " n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, GemmBFormatTest, ::testing::ValuesIn(gemm_b_formats()),
                         [](const auto& info) { return std::string(info.param->name); });

TEST(FormatList, BestFirstAndHostFiltering) {
  auto all = gemm_b_formats_for(PackSourceLayout::kNK, onnx::TensorProto::FLOAT,
                                device::IsaLevel::kAvx512);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->name, "f32_gemm_b_n32_nk_f32");
  EXPECT_EQ(all[1]->name, "f32_gemm_b_n16_nk_f32");
  EXPECT_EQ(
      gemm_b_formats_for(PackSourceLayout::kKN, onnx::TensorProto::FLOAT16, device::IsaLevel::kAvx2)
          .size(),
      1u);
  EXPECT_EQ(
      gemm_b_runtime_format(PackSourceLayout::kKN, onnx::TensorProto::FLOAT, device::IsaLevel::kRef)
          ->name,
      "f32_gemm_b_n16_kn_f32");
  EXPECT_EQ(gemm_b_runtime_format(PackSourceLayout::kKN, onnx::TensorProto::DOUBLE,
                                  device::IsaLevel::kAvx512),
            nullptr);
  // The family's request for a MatMul B [40, 70] at AVX-512: both panel widths.
  onnx::NodeProto node;
  node.set_op_type("MatMul");
  node.add_input("a");
  node.add_input("b");
  const WeightUse use{"b", "MatMul", &node, 1, onnx::TensorProto::FLOAT, {40, 70}, nullptr};
  auto acc = pack_request(*find_pack_family("gemm_b"), use, device::IsaLevel::kAvx512).formats;
  ASSERT_EQ(acc.size(), 2u);
  EXPECT_EQ(acc[0].required_architecture, "x86_64-avx512f");
  EXPECT_EQ(acc[1].required_architecture, "x86_64-avx2-fma");
  // The dims check accepts the right dims and names the wrong ones.
  onnx::TensorProto src;
  src.set_data_type(onnx::TensorProto::FLOAT);
  src.add_dims(40);
  src.add_dims(70);
  const GemmBFormat& f = *find_gemm_b_format("f32_gemm_b_n32_kn_f32");
  const auto t = gemm_b_struct_type(f);
  EXPECT_TRUE(acc[0].check_dims(src, t, gemm_b_dims(f, 40, 70)).ok());
  const Status bad = acc[0].check_dims(src, t, gemm_b_dims(f, 70, 40));
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("expected [2, 40, 6, 26]"), std::string::npos) << bad.message();
  EXPECT_FALSE(acc[1].check_dims(src, t, gemm_b_dims(f, 40, 70)).ok());  // name differs
}

// aarch64 levels accept the NEON formats only, and x86-64 levels never do.
TEST(FormatList, Aarch64LevelsAcceptTheNeonFormats) {
  for (device::IsaLevel level :
       {device::IsaLevel::kNeon, device::IsaLevel::kDotprod, device::IsaLevel::kI8mm}) {
    for (auto layout : {PackSourceLayout::kKN, PackSourceLayout::kNK}) {
      for (int32_t type :
           {int32_t(onnx::TensorProto::FLOAT), int32_t(onnx::TensorProto::FLOAT16)}) {
        const auto got = gemm_b_formats_for(layout, type, level);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0]->nr, 12u);
        EXPECT_EQ(got[0]->architecture, "aarch64-neon");
        EXPECT_EQ(got[0]->isa, device::IsaLevel::kNeon);
        EXPECT_EQ(got[0]->layout, layout);
        EXPECT_EQ(got[0]->source_type, type);
      }
    }
    // A miss packs the runtime's own width: the NEON kernel's on an aarch64
    // build, the portable 16-column one where no NEON kernel is built.
    const GemmBFormat* miss =
        gemm_b_runtime_format(PackSourceLayout::kNK, onnx::TensorProto::FLOAT, level);
    ASSERT_NE(miss, nullptr);
#if defined(__aarch64__)
    EXPECT_EQ(miss->name, "f32_gemm_b_n12_nk_f32");
#else
    EXPECT_EQ(miss->name, "f32_gemm_b_n16_nk_f32");
#endif
  }
  for (device::IsaLevel level :
       {device::IsaLevel::kRef, device::IsaLevel::kAvx2, device::IsaLevel::kAvx512}) {
    for (const GemmBFormat* f :
         gemm_b_formats_for(PackSourceLayout::kKN, onnx::TensorProto::FLOAT, level))
      EXPECT_NE(f->nr, 12u) << f->name;
  }
  const GemmBFormat& f = *find_gemm_b_format("f32_gemm_b_n12_kn_f32");
  EXPECT_EQ(gemm_b_dims(f, 40, 70), (std::vector<uint64_t>{5, 40, 10, 2}));
  EXPECT_EQ(gemm_b_payload_bytes(f, 40, 70), 6u * 40 * 12 * 4);
}

TEST(FormatList, PackRejectsMismatchedSources) {
  const GemmBFormat& f = *find_gemm_b_format("f32_gemm_b_n16_kn_f32");
  std::vector<uint8_t> src(6 * 4), out(gemm_b_payload_bytes(f, 2, 3));
  const int64_t dims[] = {2, 3};
  auto s = gemm_b_source(src, onnx::TensorProto::FLOAT, dims, PackSourceLayout::kKN);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(gemm_b_pack(f, *s, out).ok());
  std::vector<uint8_t> short_out(out.size() - 4);
  EXPECT_FALSE(gemm_b_pack(f, *s, short_out).ok());
  const GemmBFormat& f16 = *find_gemm_b_format("f32_gemm_b_n16_kn_f16");
  EXPECT_FALSE(gemm_b_pack(f16, *s, out).ok());
  EXPECT_FALSE(gemm_b_source(std::span<const uint8_t>(src).first(20), onnx::TensorProto::FLOAT,
                             dims, PackSourceLayout::kKN)
                   .ok());
  const int64_t bad_dims[] = {2, -3};
  EXPECT_FALSE(gemm_b_source(src, onnx::TensorProto::FLOAT, bad_dims, PackSourceLayout::kKN).ok());
}

// A pack written to disk and read back gives the same GEMM bits as a fresh one.
TEST(FormatList, GemmFromPackReadBackIsBitIdentical) {
  testing::TempDir dir;
  const size_t m = 33, k = 300, n = 130;
  for (const GemmBFormat* f : gemm_b_formats()) {
    const auto src = source_bytes(f->source_type, k * n, 5);
    const auto packed = pack_of(*f, src, k, n);
    testing::write_bytes(dir.file("b.bin"),
                         std::string(reinterpret_cast<const char*>(packed.data()), packed.size()));
    const std::string back = testing::read_bytes(dir.file("b.bin"));
    std::vector<float> read_back(back.size() / 4);
    std::memcpy(read_back.data(), back.data(), back.size());
    const auto a_bytes = source_bytes(onnx::TensorProto::FLOAT, m * k, 6);
    std::vector<float> a(m * k), bias(n, 0.5f);
    std::memcpy(a.data(), a_bytes.data(), a_bytes.size());
    std::vector<float> c1(m * n), c2(m * n);
    GemmCall call;
    call.m = m;
    call.a = a.data();
    call.lda = k;
    call.ldc = n;
    call.alpha = 0.75f;
    call.bias = bias.data();
    call.bias_cs = 1;
    call.c = c1.data();
    ASSERT_TRUE(run_gemm({f, packed, k, n}, call).ok());
    call.c = c2.data();
    base::ThreadPool pool(2);
    const std::span<const uint8_t> mapped(reinterpret_cast<const uint8_t*>(read_back.data()),
                                          back.size());
    ASSERT_TRUE(run_gemm({f, mapped, k, n}, call, &pool).ok());
    EXPECT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * 4)) << f->name;
    EXPECT_FALSE(run_gemm({f, mapped.first(mapped.size() - 4), k, n}, call).ok());
  }
}

}  // namespace
}  // namespace onnx_prepack::pack
