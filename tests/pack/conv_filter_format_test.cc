// Conv and ConvTranspose filter formats: every byte described, golden
// fingerprints, decoders run in ONNX Runtime, and the blocked bytes are those
// the Conv kernel reads.
#include "pack/conv_filter_format.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "decoder_in_ort.h"
#include "kernels/f32_conv/f32_conv.h"
#include "kernels/vec_math/vec_half.h"
#include "testing/test_models.h"
#include "types/codec.h"
#include "types/struct_type.h"

namespace onnx_prepack::pack {
namespace {

uint64_t fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::vector<float> floats(size_t n, uint32_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  std::vector<float> out(n);
  for (float& f : out) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    f = float(uint32_t(x >> 40)) / float(1 << 23) - 1.0f;
  }
  return out;
}

struct Shape {
  std::vector<int64_t> dims;
  int64_t group;
};

// Filters for a format: blocked ones with several groups and tails, depthwise
// ones. Transposed formats read the same dims as [C, M/group, k...].
std::vector<Shape> shapes_for(const ConvFilterFormat& f) {
  if (f.mr == 0) return {{{24, 1, 3, 3}, 24}, {{5, 1, 7}, 5}, {{16, 1, 5, 5}, 16}};
  return {{{37, 5, 3, 3}, 1}, {{24, 4, 3, 2}, 3},   {{5, 3, 1, 1}, 1},
          {{28, 6, 3}, 2},    {{9, 2, 2, 3, 2}, 1}, {{12, 1, 3, 3}, 3}};
}

std::vector<uint8_t> pack_of(const ConvFilterFormat& f, const std::vector<float>& w,
                             const Shape& s) {
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(w.data()), w.size() * 4);
  auto src = conv_filter_source(bytes, onnx::TensorProto::FLOAT, s.dims, s.group, f.transposed);
  EXPECT_TRUE(src.ok()) << src.status().message();
  std::vector<uint8_t> out(conv_filter_payload_bytes(f, *src), 0xAB);
  Status st = conv_filter_pack(f, *src, out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

size_t count(const Shape& s) {
  size_t n = 1;
  for (int64_t d : s.dims) n *= size_t(d);
  return n;
}

const ConvFilterFormat* kOrderTransposedM6() {
  return find_conv_filter_format("f32_deconv_filter_m6");
}

class ConvFilterFormatTest : public ::testing::TestWithParam<const ConvFilterFormat*> {};

TEST_P(ConvFilterFormatTest, TypeDescribesEveryByte) {
  const ConvFilterFormat& f = *GetParam();
  const onnx::StructTypeProto t = conv_filter_struct_type(f);
  EXPECT_EQ(t.name(), f.name);
  types::Catalogue none;
  for (const Shape& s : shapes_for(f)) {
    const auto w = floats(count(s), 3);
    std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(w.data()), w.size() * 4);
    auto src = conv_filter_source(bytes, onnx::TensorProto::FLOAT, s.dims, s.group, f.transposed);
    ASSERT_TRUE(src.ok());
    auto bits = types::struct_type_bits(none, t, conv_filter_dims(f, *src));
    ASSERT_TRUE(bits.ok()) << bits.status().message();
    EXPECT_EQ(*bits, conv_filter_payload_bytes(f, *src) * 8);
  }
}

TEST_P(ConvFilterFormatTest, DecoderSignatureMatchesTheLeaves) {
  const onnx::StructTypeProto t = conv_filter_struct_type(*GetParam());
  types::Catalogue none;
  auto sig = types::leaf_signature(none, t);
  ASSERT_TRUE(sig.ok()) << sig.status().message();
  for (const auto& p : types::check_decoder(t.decoder(), *sig, "decoder")) {
    ADD_FAILURE() << p.path << ": " << p.message;
  }
}

// The payload starts with what the kernels read in place: for blocked formats
// the bytes of the kernels layer's pack_blocked_filter, for depthwise ones the
// taps in source order.
TEST_P(ConvFilterFormatTest, PayloadIsTheKernelLayout) {
  const ConvFilterFormat& f = *GetParam();
  for (const Shape& s : shapes_for(f)) {
    const auto w = floats(count(s), 5);
    const auto packed = pack_of(f, w, s);
    kernels::ConvGeometry g;
    g.m = s.dims[0];
    g.group = s.group;
    g.c = s.dims[1] * s.group;
    for (size_t i = 2; i < s.dims.size(); ++i) g.kernel[3 - (s.dims.size() - i)] = s.dims[i];
    std::vector<float> want(kernels::blocked_filter_floats(g));
    if (f.mr == 0) {
      want = w;
    } else if (f.transposed) {
      // The grouped 1x1 convolution whose filter W'[g * Mg' + r][c] = W[g * Cg + c][r].
      const int64_t cg = s.dims[0] / s.group, mg = int64_t(w.size()) / s.dims[0];
      std::vector<float> wt(w.size());
      for (int64_t gi = 0; gi < s.group; ++gi) {
        for (int64_t r = 0; r < mg; ++r) {
          for (int64_t c = 0; c < cg; ++c)
            wt[size_t((gi * mg + r) * cg + c)] = w[size_t((gi * cg + c) * mg + r)];
        }
      }
      kernels::ConvGeometry g1;
      g1.m = mg * s.group;
      g1.c = s.dims[0];
      g1.group = s.group;
      want.assign(kernels::blocked_filter_floats(g1), 0.0f);
      kernels::pack_blocked_filter(wt.data(), g1, f.mr, want.data());
    } else {
      kernels::pack_blocked_filter(w.data(), g, f.mr, want.data());
    }
    ASSERT_GE(packed.size(), want.size() * 4);
    EXPECT_EQ(0, std::memcmp(packed.data(), want.data(), want.size() * 4));
  }
}

// Golden fingerprints (format.md §6): FNV-1a 64 of packing a fixed 37 x 5 x 3 x 3
// (blocked and transposed, group 1) or 24 x 1 x 3 x 3 (depthwise) filter. A change here
// changes packed bytes: bump format_version before updating the value.
TEST_P(ConvFilterFormatTest, GoldenFingerprint) {
  static const std::map<std::string, uint64_t> kGolden = {
      {"f32_conv_filter_m14", 0x918c89b7960188beull},
      {"f32_conv_filter_m6", 0x779ec5a292d2e58eull},
      {"f32_conv_dw_avx512", 0x1930fe80d8d7424eull},
      {"f32_conv_dw_avx2", 0x1930fe80d8d7424eull},
      {"f32_deconv_filter_m14", 0xa443afc62e1a3832ull},
      {"f32_deconv_filter_m6", 0x50c92e99e6840fdaull},
      {"f32_conv_filter_m8", 0x62228fe65b480a3aull},
      {"f32_conv_dw_neon", 0x1930fe80d8d7424eull},
      {"f32_deconv_filter_m8", 0xb9235ee194ceb48eull},
  };
  const ConvFilterFormat& f = *GetParam();
  const Shape s = shapes_for(f)[0];
  const auto packed = pack_of(f, floats(count(s), 42), s);
  const uint64_t h = fnv1a64(packed.data(), packed.size());
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%016llxull", static_cast<unsigned long long>(h));
  ASSERT_TRUE(kGolden.count(std::string(f.name))) << f.name;
  EXPECT_EQ(h, kGolden.at(std::string(f.name))) << "{\"" << f.name << "\", " << hex << "},";
}

// The decoder, run by ONNX Runtime on the leaves of a real pack, gives the
// filter back bit for bit.
TEST_P(ConvFilterFormatTest, DecoderRunsInOnnxRuntime) {
  const std::string ort_dir = testing_support::ort_dir();
  ASSERT_TRUE(std::filesystem::exists(ort_dir)) << "no " << ort_dir << ": run tools/setup.sh";
  const ConvFilterFormat& f = *GetParam();
  testing::TempDir dir;
  for (const Shape& s : shapes_for(f)) {
    const auto w = floats(count(s), 9);
    const auto packed = pack_of(f, w, s);
    std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(w.data()), w.size() * 4);
    auto src = conv_filter_source(bytes, onnx::TensorProto::FLOAT, s.dims, s.group, f.transposed);
    const onnx::StructTypeProto t = conv_filter_struct_type(f);
    types::Catalogue none;
    auto leaves = types::read_leaves(none, t, conv_filter_dims(f, *src), packed);
    ASSERT_TRUE(leaves.ok()) << leaves.status().message();
    const std::string got = testing_support::run_decoder_in_ort(
        t.decoder(), *leaves, 13, onnx::TensorProto::FLOAT, dir, std::string(f.name));
    ASSERT_EQ(got.size(), w.size() * 4);
    EXPECT_EQ(0, std::memcmp(got.data(), w.data(), got.size())) << f.name;
  }
}

std::vector<const ConvFilterFormat*> formats_of(int32_t source_type) {
  std::vector<const ConvFilterFormat*> out;
  for (const ConvFilterFormat* f : conv_filter_formats()) {
    if (f->source_type == source_type) out.push_back(f);
  }
  return out;
}

// The FLOAT formats; the FLOAT16 ones are checked against them below.
INSTANTIATE_TEST_SUITE_P(AllFormats, ConvFilterFormatTest,
                         ::testing::ValuesIn(formats_of(onnx::TensorProto::FLOAT)),
                         [](const auto& info) { return std::string(info.param->name); });

// Finite FLOAT16 bits (normal and subnormal, both signs).
std::vector<uint16_t> halves(size_t n, uint32_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 7;
  std::vector<uint16_t> out(n);
  for (uint16_t& h : out) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t r = uint32_t(x >> 33);
    h = uint16_t(((r & 1) << 15) | (((r >> 1) % 31) << 10) | ((r >> 6) & 0x3ff));
  }
  return out;
}

// A FLOAT16 filter packs, in its _f16 format, to the bytes of the FLOAT
// filter holding the exactly widened values in the FLOAT twin; the type says
// FLOAT16, entries of the other source type are refused, and the decoder,
// run by ONNX Runtime, gives the FLOAT16 filter back bit for bit.
TEST(ConvFilterFormats, Float16SourcesShareTheFloatPayload) {
  const auto f16 = formats_of(onnx::TensorProto::FLOAT16);
  ASSERT_EQ(f16.size(), formats_of(onnx::TensorProto::FLOAT).size());
  const std::string ort_dir = testing_support::ort_dir();
  testing::TempDir dir;
  for (const ConvFilterFormat* f : f16) {
    const std::string name(f->name);
    ASSERT_EQ(name.substr(name.size() - 4), "_f16");
    const ConvFilterFormat* twin = find_conv_filter_format(name.substr(0, name.size() - 4));
    ASSERT_NE(twin, nullptr) << name;
    EXPECT_EQ(twin->mr, f->mr);
    EXPECT_EQ(twin->transposed, f->transposed);
    EXPECT_EQ(twin->architecture, f->architecture);
    const onnx::StructTypeProto t = conv_filter_struct_type(*f);
    bool says_f16 = false;
    for (const auto& e : t.metadata_props())
      says_f16 = says_f16 || (e.key() == "source_type" && e.value() == "FLOAT16");
    EXPECT_TRUE(says_f16) << name;
    for (const Shape& s : shapes_for(*f)) {
      const auto h = halves(count(s), 5);
      std::vector<float> w(h.size());
      for (size_t i = 0; i < h.size(); ++i) w[i] = kernels::vec::half_to_float(h[i]);
      std::span<const uint8_t> hb(reinterpret_cast<const uint8_t*>(h.data()), h.size() * 2);
      auto src = conv_filter_source(hb, onnx::TensorProto::FLOAT16, s.dims, s.group, f->transposed);
      ASSERT_TRUE(src.ok()) << src.status().message();
      std::vector<uint8_t> got(conv_filter_payload_bytes(*f, *src), 0xAB);
      ASSERT_TRUE(conv_filter_pack(*f, *src, got).ok());
      EXPECT_EQ(got, pack_of(*twin, w, s)) << name;
      // A FLOAT16 source does not pack into the FLOAT format, nor the reverse.
      EXPECT_FALSE(conv_filter_pack(*twin, *src, got).ok());
      const auto dims = conv_filter_dims(*f, *src);
      EXPECT_TRUE(
          conv_filter_check_entry(*f, t, dims, onnx::TensorProto::FLOAT16, s.dims, s.group).ok());
      EXPECT_FALSE(
          conv_filter_check_entry(*f, t, dims, onnx::TensorProto::FLOAT, s.dims, s.group).ok());
      types::Catalogue none;
      auto bits = types::struct_type_bits(none, t, dims);
      ASSERT_TRUE(bits.ok()) << bits.status().message();
      EXPECT_EQ(*bits, got.size() * 8);
      if (!std::filesystem::exists(ort_dir)) continue;
      auto leaves = types::read_leaves(none, t, dims, got);
      ASSERT_TRUE(leaves.ok()) << leaves.status().message();
      const std::string dec = testing_support::run_decoder_in_ort(
          t.decoder(), *leaves, 13, onnx::TensorProto::FLOAT16, dir, name);
      ASSERT_EQ(dec.size(), h.size() * 2) << name;
      EXPECT_EQ(0, std::memcmp(dec.data(), h.data(), dec.size())) << name;
    }
  }
  // Selection follows the source type.
  const std::vector<int64_t> dw{32, 1, 3, 3}, blocked{32, 16, 3, 3};
  EXPECT_EQ(conv_filter_formats_for(blocked, 1, device::IsaLevel::kAvx512, false,
                                    onnx::TensorProto::FLOAT16)
                .front()
                ->name,
            "f32_conv_filter_m14_f16");
  EXPECT_EQ(conv_filter_format_for_rows(dw, 32, 0, device::IsaLevel::kAvx2, false,
                                        onnx::TensorProto::FLOAT16)
                ->name,
            "f32_conv_dw_avx2_f16");
  EXPECT_EQ(conv_filter_format_for_rows(blocked, 1, 6, device::IsaLevel::kAvx2, true,
                                        onnx::TensorProto::FLOAT16)
                ->name,
            "f32_deconv_filter_m6_f16");
}

TEST(ConvFilterFormats, ChosenByShapeAndHost) {
  const std::vector<int64_t> dw{32, 1, 3, 3}, blocked{32, 16, 3, 3};
  EXPECT_EQ(conv_filter_formats_for(dw, 32, device::IsaLevel::kAvx512).front()->mr, 0u);
  EXPECT_EQ(conv_filter_formats_for(blocked, 1, device::IsaLevel::kAvx512).front()->mr, 14u);
  EXPECT_EQ(conv_filter_formats_for(blocked, 1, device::IsaLevel::kAvx2).size(), 1u);
  EXPECT_EQ(conv_filter_formats_for(blocked, 1, device::IsaLevel::kAvx2).front()->mr, 6u);
  // The runtime's miss format follows the host level (depthwise too).
  EXPECT_EQ(conv_filter_format_for_rows(dw, 32, 0, device::IsaLevel::kAvx2)->name,
            "f32_conv_dw_avx2");
  EXPECT_EQ(conv_filter_format_for_rows(dw, 32, 0, device::IsaLevel::kAvx512)->name,
            "f32_conv_dw_avx512");
  EXPECT_EQ(conv_filter_format_for_rows(blocked, 1, 6, device::IsaLevel::kRef)->name,
            "f32_conv_filter_m6");
  EXPECT_EQ(conv_filter_format_for_rows(blocked, 1, 0, device::IsaLevel::kAvx512), nullptr);
  // A [32, 1, 3, 3] filter with group 2 is a blocked grouped filter, not depthwise.
  EXPECT_NE(conv_filter_formats_for(dw, 2, device::IsaLevel::kAvx512).front()->mr, 0u);
  // ConvTranspose filters [C, M/group, k...] get the transposed formats only.
  const std::vector<int64_t> deconv{32, 16, 2, 2};
  EXPECT_EQ(conv_filter_formats_for(deconv, 1, device::IsaLevel::kAvx512, true).size(), 2u);
  EXPECT_EQ(conv_filter_formats_for(deconv, 1, device::IsaLevel::kAvx512, true).front()->name,
            "f32_deconv_filter_m14");
  EXPECT_EQ(conv_filter_format_for_rows(deconv, 1, 6, device::IsaLevel::kAvx2, true)->name,
            "f32_deconv_filter_m6");
  // Depthwise-shaped ConvTranspose filters use the transposed blocked layout too.
  EXPECT_EQ(conv_filter_formats_for(dw, 32, device::IsaLevel::kAvx512, true).front()->name,
            "f32_deconv_filter_m14");
  // aarch64 levels read only the NEON formats (8-row blocks, the NEON GEMM
  // tile's), x86-64 levels never read them; a miss at an aarch64 level packs
  // 8-row blocks, at ref the portable 6-row ones.
  for (device::IsaLevel l :
       {device::IsaLevel::kNeon, device::IsaLevel::kDotprod, device::IsaLevel::kI8mm}) {
    const auto b = conv_filter_formats_for(blocked, 1, l);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0]->name, "f32_conv_filter_m8");
    EXPECT_EQ(b[0]->architecture, "aarch64-neon");
    EXPECT_EQ(b[0]->mr, 8u);
    ASSERT_EQ(conv_filter_formats_for(dw, 32, l).size(), 1u);
    EXPECT_EQ(conv_filter_formats_for(dw, 32, l).front()->name, "f32_conv_dw_neon");
    ASSERT_EQ(conv_filter_formats_for(deconv, 1, l, true).size(), 1u);
    EXPECT_EQ(conv_filter_formats_for(deconv, 1, l, true).front()->name, "f32_deconv_filter_m8");
    EXPECT_EQ(
        conv_filter_formats_for(blocked, 1, l, false, onnx::TensorProto::FLOAT16).front()->name,
        "f32_conv_filter_m8_f16");
    EXPECT_EQ(conv_filter_format_for_rows(blocked, 1, 8, l)->name, "f32_conv_filter_m8");
    EXPECT_EQ(conv_filter_format_for_rows(dw, 32, 0, l)->name, "f32_conv_dw_neon");
    EXPECT_EQ(conv_filter_format_for_rows(deconv, 1, 8, l, true)->name, "f32_deconv_filter_m8");
  }
  for (device::IsaLevel l : {device::IsaLevel::kAvx2, device::IsaLevel::kAvx512}) {
    for (const auto* f : conv_filter_formats_for(blocked, 1, l)) EXPECT_NE(f->mr, 8u);
    EXPECT_NE(conv_filter_format_for_rows(dw, 32, 0, l)->architecture, "aarch64-neon");
  }
  EXPECT_TRUE(conv_filter_formats_for(blocked, 1, device::IsaLevel::kRef).empty());
  EXPECT_EQ(conv_filter_format_for_rows(dw, 32, 0, device::IsaLevel::kRef)->name,
            "f32_conv_dw_avx2");
  std::vector<float> w(10);
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(w.data()), 40);
  // A Conv filter source is not a ConvTranspose pack's and vice versa.
  auto conv_src =
      conv_filter_source(bytes, onnx::TensorProto::FLOAT, std::vector<int64_t>{10, 1, 1}, 1);
  ASSERT_TRUE(conv_src.ok());
  std::vector<uint8_t> out(conv_filter_payload_bytes(*kOrderTransposedM6(), *conv_src));
  EXPECT_FALSE(conv_filter_pack(*kOrderTransposedM6(), *conv_src, out).ok());
  EXPECT_FALSE(
      conv_filter_source(bytes, onnx::TensorProto::FLOAT, std::vector<int64_t>{10, 1, 1}, 3).ok());
  EXPECT_FALSE(
      conv_filter_source(bytes, onnx::TensorProto::FLOAT, std::vector<int64_t>{10, 1}, 1).ok());
}

}  // namespace
}  // namespace onnx_prepack::pack
