// MatMulNBits weight formats: the struct type describes every byte, golden
// fingerprints, the packed records hold the codes where q4_gemm.h says, and
// lineage requests of a node (roles and attributes in the format's order).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "decoder_in_ort.h"
#include "pack/pack_family.h"
#include "pack/q_gemm_b.h"
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

struct Source {
  std::vector<uint8_t> b, zp;
  std::vector<float> scales;
};

// Deterministic MatMulNBits operands for `s` with packed uint8 zero points.
Source source_of(const kernels::QGemmShape& s, uint32_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t(x >> 32);
  };
  Source src;
  src.b.resize(size_t(s.N * s.k_blocks() * s.block * s.bits / 8));
  for (auto& v : src.b) v = uint8_t(next());
  src.scales.resize(size_t(s.N * s.k_blocks()));
  for (auto& v : src.scales) v = float(next() >> 8) / float(1 << 24) + 0.01f;
  src.zp.resize(size_t(s.N * ((s.k_blocks() * s.bits + 7) / 8)));
  for (auto& v : src.zp) v = uint8_t(next());
  return src;
}

std::vector<uint8_t> pack_of(const kernels::QGemmShape& s, const Source& src) {
  std::vector<uint8_t> out(q_gemm_b_payload_bytes(s), 0xAB);
  kernels::QWeightSource w;
  w.b = src.b.data();
  w.scales = src.scales.data();
  w.zp_packed = src.zp.data();
  kernels::q_pack_weights(s, w, out.data());
  return out;
}

kernels::QGemmShape shape(int64_t K, int64_t N, int bits, int block) {
  kernels::QGemmShape s;
  s.K = K;
  s.N = N;
  s.bits = bits;
  s.block = block;
  return s;
}

TEST(QGemmBFormat, TypeDescribesEveryByte) {
  types::Catalogue none;
  for (const QGemmBFormat* f : q_gemm_b_formats()) {
    const onnx::StructTypeProto t = q_gemm_b_struct_type(*f);
    EXPECT_EQ(t.name(), f->name);
    for (int block : {16, 32, 256}) {
      for (int64_t n : {1, 16, 17, 40}) {
        const auto s = shape(100, n, f->bits, block);
        const auto dims = q_gemm_b_dims(s);
        auto bits = types::struct_type_bits(none, t, dims);
        ASSERT_TRUE(bits.ok()) << bits.status().message();
        EXPECT_EQ(*bits, q_gemm_b_payload_bytes(s) * 8) << f->name << " block " << block;
      }
    }
  }
}

// A change here changes packed bytes: bump format_version before updating.
TEST(QGemmBFormat, GoldenFingerprint) {
  const std::map<std::string, uint64_t> kGolden = {
      {"q4_gemm_b_panel16", 0xe4c4939f399a154eull},
      {"q8_gemm_b_panel16", 0xf1fe1688257fc8c4ull},
      // The aarch64 formats are the same bytes under another name.
      {"q4_gemm_b_panel16_aarch64", 0xe4c4939f399a154eull},
      {"q8_gemm_b_panel16_aarch64", 0xf1fe1688257fc8c4ull},
  };
  ASSERT_EQ(q_gemm_b_formats().size(), kGolden.size());
  for (const QGemmBFormat* f : q_gemm_b_formats()) {
    const auto s = shape(75, 37, f->bits, 32);
    const auto packed = pack_of(s, source_of(s, 7));
    EXPECT_EQ(fnv1a64(packed.data(), packed.size()), kGolden.at(std::string(f->name)))
        << f->name << std::hex << " 0x" << fnv1a64(packed.data(), packed.size());
  }
}

// Every code lands where the layout says: int32 lane j of group g of the
// record of (panel, block); 4-bit: byte r low nibble k = 8g + r, high 8g + 4 + r.
TEST(QGemmBFormat, CodesScalesAndZeroPointsWhereTheLayoutSays) {
  for (int bits : {4, 8}) {
    const auto s = shape(70, 20, bits, 32);
    const Source src = source_of(s, 3);
    const auto packed = pack_of(s, src);
    const int64_t kb = s.k_blocks();
    for (int64_t n = 0; n < s.N; ++n) {
      for (int64_t b = 0; b < kb; ++b) {
        const uint8_t* rec =
            packed.data() + size_t(n / 16) * s.panel_bytes() + size_t(b) * s.record_bytes();
        const int64_t j = n % 16;
        for (int64_t i = 0; i < s.block; ++i) {
          const size_t src_i = (size_t(n * kb + b) * size_t(s.block) + size_t(i)) * size_t(bits);
          const int want = bits == 8 ? src.b[src_i / 8] : (src.b[src_i / 8] >> (src_i % 8)) & 15;
          int got;
          if (bits == 8) {
            got = rec[(i / 4) * 64 + j * 4 + i % 4];
          } else {
            const uint8_t byte = rec[(i / 8) * 64 + j * 4 + i % 4];
            got = (i % 8) < 4 ? (byte & 15) : (byte >> 4);
          }
          ASSERT_EQ(got, want) << "bits " << bits << " n " << n << " block " << b << " i " << i;
        }
        const float* meta = reinterpret_cast<const float*>(rec + s.code_bytes());
        const int zp = bits == 8
                           ? src.zp[size_t(n * kb + b)]
                           : (src.zp[size_t(n * ((kb + 1) / 2) + b / 2)] >> (4 * (b & 1))) & 15;
        EXPECT_EQ(meta[j], src.scales[size_t(n * kb + b)]);
        EXPECT_EQ(meta[16 + j], src.scales[size_t(n * kb + b)] * float(zp));
      }
    }
    // Columns past N: zero codes, scales and corrections.
    const uint8_t* last = packed.data() + size_t(s.panels() - 1) * s.panel_bytes();
    EXPECT_EQ(last[4 * 4 + 0], 0);  // lane 4 = column 20, past N
  }
}

TEST(QGemmBFormat, DecoderSignatureMatchesTheLeaves) {
  types::Catalogue none;
  for (const QGemmBFormat* f : q_gemm_b_formats()) {
    const onnx::StructTypeProto t = q_gemm_b_struct_type(*f);
    auto sig = types::leaf_signature(none, t);
    ASSERT_TRUE(sig.ok()) << sig.status().message();
    for (const auto& p : types::check_decoder(t.decoder(), *sig, "decoder")) {
      ADD_FAILURE() << f->name << " " << p.path << ": " << p.message;
    }
  }
}

// The decoder, run by ONNX Runtime on the leaves of a real pack, gives the
// dequantized weight s * (q - z) of every (k, n) of the source (float64
// reference; the decoder computes s * q - s * z in float), and zeros for the
// columns past N.
TEST(QGemmBFormat, DecoderRunsInOnnxRuntime) {
  const std::string ort_dir = testing_support::ort_dir();
  ASSERT_TRUE(std::filesystem::exists(ort_dir)) << "no " << ort_dir << ": run tools/setup.sh";
  testing::TempDir dir;
  for (const QGemmBFormat* f : q_gemm_b_formats()) {
    const auto s = shape(70, 20, f->bits, 32);
    const Source src = source_of(s, 11);
    const auto packed = pack_of(s, src);
    const onnx::StructTypeProto t = q_gemm_b_struct_type(*f);
    types::Catalogue none;
    auto leaves = types::read_leaves(none, t, q_gemm_b_dims(s), packed);
    ASSERT_TRUE(leaves.ok()) << leaves.status().message();
    const std::string got = testing_support::run_decoder_in_ort(
        t.decoder(), *leaves, 18, onnx::TensorProto::FLOAT, dir, std::string(f->name));
    const int64_t kb = s.k_blocks(), rows = kb * s.block, cols = s.panels() * 16;
    ASSERT_EQ(got.size(), size_t(rows * cols) * 4);
    std::vector<float> w(size_t(rows * cols));
    std::memcpy(w.data(), got.data(), got.size());
    double worst = 0;
    for (int64_t n = 0; n < cols; ++n) {
      for (int64_t k = 0; k < s.K; ++k) {
        const float v = w[size_t(k * cols + n)];
        if (n >= s.N) {
          ASSERT_EQ(v, 0.0f) << f->name << " padding column " << n;
          continue;
        }
        const int64_t b = k / s.block;
        const size_t src_i =
            (size_t(n * kb + b) * size_t(s.block) + size_t(k % s.block)) * size_t(f->bits);
        const int q = f->bits == 8 ? src.b[src_i / 8] : (src.b[src_i / 8] >> (src_i % 8)) & 15;
        const int z = f->bits == 8
                          ? src.zp[size_t(n * kb + b)]
                          : (src.zp[size_t(n * ((kb + 1) / 2) + b / 2)] >> (4 * (b & 1))) & 15;
        const double want = double(src.scales[size_t(n * kb + b)]) * double(q - z);
        worst = std::max(worst, std::fabs(double(v) - want));
      }
    }
    EXPECT_LE(worst, 1e-4) << f->name;  // scales < 1.01, |q - z| < 256: float rounding only
  }
}

// One family, two architectures: an x86-64 level (and ref) accepts the
// x86_64 format of the node's bit width, an aarch64 level the aarch64-dotprod
// one (a NEON-only host then misses its entries on the device's dotprod and
// packs the same bytes itself); compile's targets find both.
TEST(QGemmBFormat, EachMachineAcceptsItsOwnFormat) {
  const PackFamily* family = find_pack_family("q_gemm_b");
  ASSERT_NE(family, nullptr);
  EXPECT_TRUE(has_machine_formats(*family, device::Machine::kX86_64));
  EXPECT_TRUE(has_machine_formats(*family, device::Machine::kAarch64));
  EXPECT_EQ(family->formats().size(), 4u);
  for (int bits : {4, 8}) {
    onnx::NodeProto n;
    n.set_op_type("MatMulNBits");
    n.set_domain("com.microsoft");
    for (const char* i : {"a", "B", "S"}) n.add_input(i);
    for (auto [name, v] : std::vector<std::pair<const char*, int64_t>>{
             {"K", 64}, {"N", 32}, {"bits", bits}, {"block_size", 32}}) {
      auto* a = n.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(v);
    }
    const WeightUse use{"B", "MatMulNBits", &n, 1, onnx::TensorProto::UINT8, {32, 2, 16}, nullptr};
    const std::string x86 = bits == 4 ? "q4_gemm_b_panel16" : "q8_gemm_b_panel16";
    for (device::IsaLevel level :
         {device::IsaLevel::kRef, device::IsaLevel::kAvx2, device::IsaLevel::kAvx512}) {
      const resolve::PackRequest r = pack_request(*family, use, level);
      ASSERT_EQ(r.formats.size(), 1u);
      EXPECT_EQ(r.formats[0].name, x86);
      EXPECT_EQ(r.formats[0].required_architecture, "x86_64");
      EXPECT_EQ(family->miss_format(use, level)->name, x86);
    }
    for (device::IsaLevel level :
         {device::IsaLevel::kNeon, device::IsaLevel::kDotprod, device::IsaLevel::kI8mm}) {
      const resolve::PackRequest r = pack_request(*family, use, level);
      ASSERT_EQ(r.formats.size(), 1u);
      EXPECT_EQ(r.formats[0].name, x86 + "_aarch64");
      EXPECT_EQ(r.formats[0].required_architecture, "aarch64-dotprod");
      EXPECT_TRUE(r.no_format_detail.empty());
      // A miss packs the same layout for the host's own kernels.
      EXPECT_EQ(family->miss_format(use, level)->name, x86 + "_aarch64");
    }
    FormatInfo info;
    ASSERT_EQ(family_of_format(x86 + "_aarch64", &info), family);
    EXPECT_EQ(info.isa, device::IsaLevel::kDotprod);
    EXPECT_EQ(info.architecture, "aarch64-dotprod");
    const QGemmBFormat* arm = q_gemm_b_format(bits, device::Machine::kAarch64);
    ASSERT_NE(arm, nullptr);
    EXPECT_EQ(arm->bits, bits);
    EXPECT_EQ(find_q_gemm_b_format(arm->name), arm);
    EXPECT_EQ(q_gemm_b_struct_type(*arm).decoder().name(), "decode_" + x86 + "_aarch64");
  }
}

TEST(QGemmBFormat, NodeLineageListsRolesAndAttributes) {
  onnx::NodeProto n;
  n.set_op_type("MatMulNBits");
  n.set_domain("com.microsoft");
  for (const char* i : {"a", "B", "S", "", "", "bias"}) n.add_input(i);
  for (auto [name, v] : std::vector<std::pair<const char*, int64_t>>{
           {"K", 64}, {"N", 32}, {"bits", 4}, {"block_size", 32}, {"accuracy_level", 4}}) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  const auto r = matmul_nbits_lineage(n);
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(r.roles, (std::vector<P>{{"scales", "S"}, {"zero_points", ""}, {"bias", "bias"}}));
  EXPECT_EQ(
      r.attrs,
      (std::vector<P>{
          {"bits", "4"}, {"block_size", "32"}, {"K", "64"}, {"N", "32"}, {"accuracy_level", "4"}}));
}

}  // namespace
}  // namespace onnx_prepack::pack
