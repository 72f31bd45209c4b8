// Integer GEMM B formats (MatMulInteger's int8 / uint8 B): the struct type
// describes every byte, golden fingerprints, codes and column sums where
// i8_gemm.h says, the decoder (checked and run in ONNX Runtime) gives back B,
// entry checks refuse other dims, source types and types, and the family's
// eligibility, formats and plan.
#include "pack/i8_gemm_b_format.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "decoder_in_ort.h"
#include "kernels/i8_gemm/i8_gemm.h"
#include "pack/pack_family.h"
#include "testing/test_models.h"
#include "types/codec.h"
#include "types/struct_type.h"

namespace onnx_prepack::pack {
namespace {

constexpr int32_t kInt8 = onnx::TensorProto::INT8;
constexpr int32_t kUint8 = onnx::TensorProto::UINT8;

uint64_t fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// Deterministic B [K, N] bytes (either type: every byte value occurs).
std::vector<uint8_t> source_of(int64_t K, int64_t N, uint32_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  std::vector<uint8_t> b(size_t(K * N));
  for (auto& v : b) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v = uint8_t(x >> 56);
  }
  return b;
}

kernels::I8GemmShape shape_of(const I8GemmBFormat& f, int64_t K, int64_t N) {
  auto s = i8_gemm_b_shape(f.source_type, std::vector<int64_t>{K, N});
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

std::vector<uint8_t> pack_of(const kernels::I8GemmShape& s, const std::vector<uint8_t>& b) {
  std::vector<uint8_t> out(i8_gemm_b_payload_bytes(s), 0xAB);
  EXPECT_TRUE(i8_gemm_b_pack(s, b, out).ok());
  return out;
}

TEST(I8GemmBFormat, NamesVersionsAndSourceTypes) {
  EXPECT_EQ(kI8GemmBPanel16.name, "i8_gemm_b_panel16");
  EXPECT_EQ(kU8GemmBPanel16.name, "u8_gemm_b_panel16");
  EXPECT_EQ(kI8GemmBPanel16Dotprod.name, "i8_gemm_b_panel16_dotprod");
  EXPECT_EQ(kU8GemmBPanel16Dotprod.name, "u8_gemm_b_panel16_dotprod");
  ASSERT_EQ(i8_gemm_b_formats().size(), 4u);
  for (const I8GemmBFormat* f : i8_gemm_b_formats()) {
    EXPECT_EQ(f->version, "1");
    const bool arm = f->isa == device::IsaLevel::kDotprod;
    EXPECT_TRUE(arm || f->isa == device::IsaLevel::kRef) << f->name;
    EXPECT_EQ(f->architecture, arm ? "aarch64-dotprod" : "x86_64");
    EXPECT_EQ(find_i8_gemm_b_format(f->name), f);
    // The baseline format of the type; the aarch64 twin is that one's, of the same type.
    const I8GemmBFormat* base = i8_gemm_b_format(f->source_type);
    ASSERT_NE(base, nullptr);
    EXPECT_EQ(base->isa, device::IsaLevel::kRef);
    EXPECT_EQ(arm ? i8_aarch64_twin(*base) : base, f);
    EXPECT_EQ(i8_aarch64_twin(*f),
              arm ? nullptr
                  : (f->source_type == kInt8 ? &kI8GemmBPanel16Dotprod : &kU8GemmBPanel16Dotprod));
    std::map<std::string, std::string> meta;
    const onnx::StructTypeProto t = i8_gemm_b_struct_type(*f);
    for (const auto& e : t.metadata_props()) meta[e.key()] = e.value();
    EXPECT_EQ(meta["format_version"], "1");
    EXPECT_EQ(meta["source_type"], f->source_type == kInt8 ? "INT8" : "UINT8");
    EXPECT_EQ(meta["stored"], f->source_type == kInt8 ? "b" : "b - 128");
    EXPECT_EQ(meta.count("lineage_roles"), 1u);  // declared empty: no lineage
    EXPECT_EQ(meta["lineage_roles"], "");
    EXPECT_EQ(meta["lineage_attrs"], "");
  }
  EXPECT_EQ(i8_gemm_b_format(onnx::TensorProto::FLOAT), nullptr);
}

TEST(I8GemmBFormat, TypeDescribesEveryByte) {
  types::Catalogue none;
  for (const I8GemmBFormat* f : i8_gemm_b_formats()) {
    const onnx::StructTypeProto t = i8_gemm_b_struct_type(*f);
    EXPECT_EQ(t.name(), f->name);
    for (int64_t k : {1, 4, 5, 100, 301}) {
      for (int64_t n : {1, 16, 17, 40}) {
        const auto s = shape_of(*f, k, n);
        auto bits = types::struct_type_bits(none, t, i8_gemm_b_dims(s));
        ASSERT_TRUE(bits.ok()) << bits.status().message();
        EXPECT_EQ(*bits, i8_gemm_b_payload_bytes(s) * 8) << f->name << " " << k << "x" << n;
        EXPECT_EQ(i8_gemm_b_payload_bytes(s),
                  size_t(s.panels()) * (size_t(s.k_groups()) * 64 + 64));
      }
    }
  }
}

// A change here changes packed bytes: bump format_version before updating.
TEST(I8GemmBFormat, GoldenFingerprint) {
  const std::map<std::string, uint64_t> kGolden = {
      {"i8_gemm_b_panel16", 0x61488cff49d6beffull},
      {"u8_gemm_b_panel16", 0xae26e328eb807c80ull},
      // The aarch64 twins: the same bytes.
      {"i8_gemm_b_panel16_dotprod", 0x61488cff49d6beffull},
      {"u8_gemm_b_panel16_dotprod", 0xae26e328eb807c80ull},
  };
  const auto b = source_of(75, 37, 7);
  for (const I8GemmBFormat* f : i8_gemm_b_formats()) {
    const auto packed = pack_of(shape_of(*f, 75, 37), b);
    EXPECT_EQ(fnv1a64(packed.data(), packed.size()), kGolden.at(std::string(f->name)))
        << f->name << std::hex << " 0x" << fnv1a64(packed.data(), packed.size());
  }
}

// Byte 4j + r of group g of panel p is B[4g + r][16p + j] (as int8, uint8 B
// minus 128); the 16 int32 after the groups are the columns' sums of those
// values; everything past K and N is 0.
TEST(I8GemmBFormat, CodesAndColumnSumsWhereTheLayoutSays) {
  const int64_t K = 70, N = 20;
  const auto b = source_of(K, N, 3);
  for (const I8GemmBFormat* f : i8_gemm_b_formats()) {
    const auto s = shape_of(*f, K, N);
    const auto packed = pack_of(s, b);
    for (int64_t n = 0; n < s.panels() * 16; ++n) {
      const uint8_t* panel = packed.data() + size_t(n / 16) * s.panel_bytes();
      const int64_t j = n % 16;
      int32_t sum = 0;
      for (int64_t k = 0; k < s.k_groups() * 4; ++k) {
        const int8_t got = int8_t(panel[size_t(k / 4) * 64 + size_t(j) * 4 + size_t(k % 4)]);
        int want = 0;
        if (k < K && n < N) {
          const uint8_t v = b[size_t(k * N + n)];
          want = f->source_type == kInt8 ? int(int8_t(v)) : int(v) - 128;
        }
        ASSERT_EQ(int(got), want) << f->name << " k " << k << " n " << n;
        sum += want;
      }
      int32_t stored;
      std::memcpy(&stored, panel + size_t(s.k_groups()) * 64 + size_t(j) * 4, 4);
      EXPECT_EQ(stored, sum) << f->name << " column " << n;
    }
  }
}

TEST(I8GemmBFormat, DecoderSignatureMatchesTheLeaves) {
  types::Catalogue none;
  for (const I8GemmBFormat* f : i8_gemm_b_formats()) {
    const onnx::StructTypeProto t = i8_gemm_b_struct_type(*f);
    auto sig = types::leaf_signature(none, t);
    ASSERT_TRUE(sig.ok()) << sig.status().message();
    ASSERT_EQ(sig->size(), 2u);
    EXPECT_EQ((*sig)[0].name, "panels.codes");
    EXPECT_EQ((*sig)[0].elem_type, kInt8);
    EXPECT_EQ((*sig)[1].name, "panels.column_sums");
    EXPECT_EQ((*sig)[1].elem_type, onnx::TensorProto::INT32);
    for (const auto& p : types::check_decoder(t.decoder(), *sig, "decoder")) {
      ADD_FAILURE() << f->name << " " << p.path << ": " << p.message;
    }
  }
}

// The decoder, run by ONNX Runtime on the leaves of a real pack, gives B
// [4 k_groups, 16 panels] of the source type: B's values, and the stored
// padding (0, decoded 0 for int8 B and 128 for uint8 B) past K and N.
TEST(I8GemmBFormat, DecoderRunsInOnnxRuntime) {
  const std::string ort_dir = testing_support::ort_dir();
  ASSERT_TRUE(std::filesystem::exists(ort_dir)) << "no " << ort_dir << ": run tools/setup.sh";
  testing::TempDir dir;
  const int64_t K = 70, N = 20;
  const auto b = source_of(K, N, 11);
  for (const I8GemmBFormat* f : i8_gemm_b_formats()) {
    const auto s = shape_of(*f, K, N);
    const auto packed = pack_of(s, b);
    const onnx::StructTypeProto t = i8_gemm_b_struct_type(*f);
    types::Catalogue none;
    auto leaves = types::read_leaves(none, t, i8_gemm_b_dims(s), packed);
    ASSERT_TRUE(leaves.ok()) << leaves.status().message();
    const std::string got = testing_support::run_decoder_in_ort(
        t.decoder(), *leaves, 13, f->source_type, dir, std::string(f->name));
    const int64_t rows = s.k_groups() * 4, cols = s.panels() * 16;
    ASSERT_EQ(got.size(), size_t(rows * cols));
    const uint8_t pad = f->source_type == kInt8 ? 0 : 128;
    for (int64_t k = 0; k < rows; ++k) {
      for (int64_t n = 0; n < cols; ++n) {
        const uint8_t want = k < K && n < N ? b[size_t(k * N + n)] : pad;
        ASSERT_EQ(uint8_t(got[size_t(k * cols + n)]), want) << f->name << " " << k << ", " << n;
      }
    }
  }
}

TEST(I8GemmBFormat, CheckEntryRefusesOtherDimsSourceTypesAndTypes) {
  const std::vector<int64_t> src = {70, 20};
  const auto s8 = shape_of(kI8GemmBPanel16, 70, 20);
  const auto dims = i8_gemm_b_dims(s8);
  const auto t8 = i8_gemm_b_struct_type(kI8GemmBPanel16);
  const auto tu8 = i8_gemm_b_struct_type(kU8GemmBPanel16);
  EXPECT_TRUE(i8_gemm_b_check_entry(kI8GemmBPanel16, t8, dims, kInt8, src).ok());
  EXPECT_TRUE(i8_gemm_b_check_entry(kU8GemmBPanel16, tu8, dims, kUint8, src).ok());
  // Dims of another K (other k_groups) or N (other panels).
  for (const std::vector<int64_t>& other :
       {std::vector<int64_t>{75, 20}, std::vector<int64_t>{70, 33}, std::vector<int64_t>{20, 70}}) {
    auto st = i8_gemm_b_check_entry(kI8GemmBPanel16, t8, dims, kInt8, other);
    EXPECT_FALSE(st.ok()) << other[0] << "x" << other[1];
    EXPECT_NE(st.message().find("dims"), std::string::npos) << st.message();
  }
  const std::vector<uint64_t> short_dims = {dims[0]};
  EXPECT_FALSE(i8_gemm_b_check_entry(kI8GemmBPanel16, t8, short_dims, kInt8, src).ok());
  // K 69 packs to the same k_groups as 70: the same dims (and bytes layout), accepted.
  EXPECT_TRUE(
      i8_gemm_b_check_entry(kI8GemmBPanel16, t8, dims, kInt8, std::vector<int64_t>{69, 20}).ok());
  // An int8 entry for a uint8 B and the other way round; a type of the other format.
  auto st = i8_gemm_b_check_entry(kI8GemmBPanel16, t8, dims, kUint8, src);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("UINT8"), std::string::npos) << st.message();
  EXPECT_FALSE(i8_gemm_b_check_entry(kU8GemmBPanel16, tu8, dims, kInt8, src).ok());
  EXPECT_FALSE(i8_gemm_b_check_entry(kI8GemmBPanel16, tu8, dims, kInt8, src).ok());
  // A type named like ours that says another source type, version or layout.
  auto relabelled = t8;
  for (auto& e : *relabelled.mutable_metadata_props())
    if (e.key() == "source_type") e.set_value("UINT8");
  EXPECT_FALSE(i8_gemm_b_check_entry(kI8GemmBPanel16, relabelled, dims, kInt8, src).ok());
  auto v2 = t8;
  for (auto& e : *v2.mutable_metadata_props())
    if (e.key() == "format_version") e.set_value("2");
  st = i8_gemm_b_check_entry(kI8GemmBPanel16, v2, dims, kInt8, src);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("version"), std::string::npos) << st.message();
  auto narrower = t8;  // column sums of 8 columns: 32 bytes per panel short
  narrower.mutable_structure()
      ->mutable_field(0)
      ->mutable_type()
      ->mutable_struct_type()
      ->mutable_array()
      ->mutable_element_type()
      ->mutable_struct_type()
      ->mutable_structure()
      ->mutable_field(1)
      ->mutable_type()
      ->mutable_struct_type()
      ->mutable_array()
      ->set_dimension(8);
  EXPECT_FALSE(i8_gemm_b_check_entry(kI8GemmBPanel16, narrower, dims, kInt8, src).ok());
}

onnx::NodeProto node(const std::string& op, const std::string& domain = "") {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_domain(domain);
  for (const char* i : {"a", "B", "a_zp", "b_zp"}) n.add_input(i);
  return n;
}

TEST(I8GemmBFamily, EligibleFormatsAndPlan) {
  const PackFamily* family = find_pack_family("i8_gemm_b");
  ASSERT_NE(family, nullptr);
  const std::vector<int64_t> d2 = {70, 20}, d3 = {2, 70, 20};
  const onnx::NodeProto mmi = node("MatMulInteger");
  EXPECT_EQ(family_for(mmi, 1, kInt8, d2), family);
  EXPECT_EQ(family_for(mmi, 1, kUint8, d2), family);
  EXPECT_EQ(family_for(node("MatMulInteger", "ai.onnx"), 1, kInt8, d2), family);
  EXPECT_FALSE(family->eligible(mmi, 0, kUint8, d2));  // A
  EXPECT_FALSE(family->eligible(mmi, 3, kInt8, {}));   // b_zero_point
  EXPECT_FALSE(family->eligible(mmi, 1, kInt8, d3));   // a batched B: the loops read it
  EXPECT_FALSE(family->eligible(mmi, 1, onnx::TensorProto::INT32, d2));
  // The other consumers of the packed kernels (issue 19): QLinearMatMul's b,
  // com.microsoft MatMulIntegerToFloat's and DynamicQuantizeMatMul's B.
  EXPECT_EQ(family_for(node("QLinearMatMul"), 3, kInt8, d2), family);
  EXPECT_EQ(family_for(node("QLinearMatMul"), 3, kUint8, d2), family);
  EXPECT_FALSE(family->eligible(node("QLinearMatMul"), 0, kUint8, d2));  // a
  EXPECT_FALSE(family->eligible(node("QLinearMatMul"), 3, kInt8, d3));
  EXPECT_EQ(family_for(node("MatMulIntegerToFloat", "com.microsoft"), 1, kInt8, d2), family);
  EXPECT_EQ(family_for(node("DynamicQuantizeMatMul", "com.microsoft"), 1, kUint8, d2), family);
  EXPECT_FALSE(family->eligible(node("MatMulIntegerToFloat", "com.microsoft"), 0, kUint8, d2));
  EXPECT_FALSE(family->eligible(node("MatMulIntegerToFloat"), 1, kInt8, d2));  // not ONNX's
  EXPECT_FALSE(family->eligible(node("QLinearMatMul", "com.microsoft"), 3, kInt8, d2));
  EXPECT_FALSE(family->eligible(node("MatMulInteger", "com.microsoft"), 1, kInt8, d2));

  FormatInfo fi;
  EXPECT_EQ(family_of_format("u8_gemm_b_panel16", &fi), family);
  EXPECT_EQ(fi.architecture, "x86_64");
  EXPECT_EQ(family_of_format("i8_gemm_b_panel16"), family);

  for (int32_t type : {kInt8, kUint8}) {
    WeightUse use;
    use.source = "B";
    use.consumer = "mmi";
    use.node = &mmi;
    use.input = 1;
    use.data_type = type;
    use.dims = d2;
    EXPECT_FALSE(family->lineage(use).has_value());
    const I8GemmBFormat& want = type == kInt8 ? kI8GemmBPanel16 : kU8GemmBPanel16;
    for (auto level :
         {device::IsaLevel::kRef, device::IsaLevel::kAvx2, device::IsaLevel::kAvx512}) {
      auto acc = family->accepted(use, level);
      ASSERT_EQ(acc.size(), 1u);
      EXPECT_EQ(acc[0].name, want.name);
      auto miss = family->miss_format(use, level);
      ASSERT_TRUE(miss.has_value());
      EXPECT_EQ(miss->name, want.name);
    }
    // aarch64 levels: the dotprod twin first (what compile --target aarch64-dotprod writes and
    // a NEON-only host rejects by its architecture), then the baseline; a miss packs the twin
    // where the level runs SDOT.
    const I8GemmBFormat& twin = type == kInt8 ? kI8GemmBPanel16Dotprod : kU8GemmBPanel16Dotprod;
    for (auto level :
         {device::IsaLevel::kNeon, device::IsaLevel::kDotprod, device::IsaLevel::kI8mm}) {
      auto acc = family->accepted(use, level);
      ASSERT_EQ(acc.size(), 2u);
      EXPECT_EQ(acc[0].name, twin.name);
      EXPECT_EQ(acc[0].architecture, "aarch64-dotprod");
      EXPECT_EQ(acc[0].isa, device::IsaLevel::kDotprod);
      EXPECT_EQ(acc[1].name, want.name);
      auto miss = family->miss_format(use, level);
      ASSERT_TRUE(miss.has_value());
      EXPECT_EQ(miss->name, level == device::IsaLevel::kNeon ? want.name : twin.name);
    }
    {
      const auto bt = source_of(70, 20, 5);
      ContentFn content_b = [&bt](const std::string&) -> Result<std::span<const uint8_t>> {
        return std::span<const uint8_t>(bt);
      };
      auto plan = family->plan(use, family->accepted(use, device::IsaLevel::kDotprod)[0], content_b,
                               nullptr);
      ASSERT_TRUE(plan.ok()) << plan.status().message();
      EXPECT_EQ(plan->type.name(), twin.name);
      EXPECT_TRUE(family->check_entry(use, plan->format, plan->type, plan->dims).ok());
      // The baseline's entry check refuses the twin's type (names differ); the bytes are equal.
      EXPECT_FALSE(family
                       ->check_entry(use, family->accepted(use, device::IsaLevel::kRef)[0],
                                     plan->type, plan->dims)
                       .ok());
      std::vector<uint8_t> got(plan->payload_bytes);
      ASSERT_TRUE(plan->pack(got).ok());
      EXPECT_EQ(got, pack_of(shape_of(want, 70, 20), bt));
    }
    // The other type's format is not this B's.
    const FormatInfo other = {type == kInt8 ? kU8GemmBPanel16.name : kI8GemmBPanel16.name, "1",
                              "x86_64", device::IsaLevel::kRef};
    const auto b = source_of(70, 20, 5);
    ContentFn content = [&b](const std::string&) -> Result<std::span<const uint8_t>> {
      return std::span<const uint8_t>(b);
    };
    EXPECT_FALSE(family->plan(use, other, content, nullptr).ok());
    auto plan =
        family->plan(use, family->accepted(use, device::IsaLevel::kRef)[0], content, nullptr);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    const auto s = shape_of(want, 70, 20);
    EXPECT_EQ(plan->dims, i8_gemm_b_dims(s));
    EXPECT_EQ(plan->payload_bytes, i8_gemm_b_payload_bytes(s));
    EXPECT_EQ(plan->type.name(), want.name);
    EXPECT_TRUE(family->check_entry(use, plan->format, plan->type, plan->dims).ok());
    std::vector<uint8_t> got(plan->payload_bytes);
    ASSERT_TRUE(plan->pack(got).ok());
    EXPECT_EQ(got, pack_of(s, b));
    // An empty B is not packed, with a reason.
    use.dims = {0, 20};
    auto empty = family->plan(use, plan->format, content, nullptr);
    EXPECT_FALSE(empty.ok());
    EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  }
}

// ConvInteger W [M, C, k...] (group 1) in the i8_conv_w formats.
kernels::I8GemmShape conv_shape_of(const I8GemmBFormat& f, const std::vector<int64_t>& dims) {
  auto s = i8_conv_w_shape(f.source_type, dims);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

std::vector<uint8_t> conv_pack_of(const kernels::I8GemmShape& s, const std::vector<uint8_t>& w,
                                  const std::vector<int64_t>& dims) {
  std::vector<uint8_t> out(i8_conv_w_payload_bytes(s, dims.size()), 0xAB);
  EXPECT_TRUE(i8_conv_w_pack(s, w, dims, out).ok());
  return out;
}

TEST(I8ConvWFormat, NamesTypesAndEveryByteDescribed) {
  types::Catalogue none;
  EXPECT_EQ(i8_conv_w_format(kInt8), &kI8ConvWPanel16);
  EXPECT_EQ(i8_conv_w_format(kUint8), &kU8ConvWPanel16);
  EXPECT_EQ(i8_conv_w_format(onnx::TensorProto::INT32), nullptr);
  EXPECT_EQ(find_i8_conv_w_format("u8_conv_w_panel16"), &kU8ConvWPanel16);
  EXPECT_EQ(i8_conv_w_format(kInt8, 2), &kI8ConvWGroupedPanel16);
  EXPECT_EQ(i8_conv_w_format(kUint8, 7), &kU8ConvWGroupedPanel16);
  EXPECT_EQ(i8_conv_w_format(kInt8, 0), nullptr);
  EXPECT_EQ(find_i8_conv_w_format("i8_conv_w_grouped_panel16"), &kI8ConvWGroupedPanel16);
  EXPECT_EQ(find_i8_conv_w_format("u8_conv_w_grouped_panel16_dotprod"),
            &kU8ConvWGroupedPanel16Dotprod);
  EXPECT_EQ(i8_aarch64_twin(kI8ConvWPanel16), &kI8ConvWPanel16Dotprod);
  EXPECT_EQ(i8_aarch64_twin(kU8ConvWGroupedPanel16), &kU8ConvWGroupedPanel16Dotprod);
  EXPECT_EQ(find_i8_gemm_b_format("i8_conv_w_panel16_dotprod"), nullptr);
  ASSERT_EQ(i8_conv_w_formats().size(), 8u);
  for (const I8GemmBFormat* f : i8_conv_w_formats()) {
    EXPECT_EQ(f->version, "1");
    EXPECT_EQ(f->architecture, f->isa == device::IsaLevel::kDotprod ? "aarch64-dotprod" : "x86_64");
    if (f->grouped) continue;  // I8ConvWGroupedFormat.*
    const onnx::StructTypeProto t = i8_conv_w_struct_type(*f);
    EXPECT_EQ(t.name(), f->name);
    for (const std::vector<int64_t>& d :
         {std::vector<int64_t>{7, 3, 3, 3}, std::vector<int64_t>{40, 24, 1, 1},
          std::vector<int64_t>{16, 5, 3}, std::vector<int64_t>{9, 2, 3, 3, 3}}) {
      const auto s = conv_shape_of(*f, d);
      EXPECT_EQ(s.N, d[0]);
      auto bits = types::struct_type_bits(none, t, i8_conv_w_dims(s, d.size()));
      ASSERT_TRUE(bits.ok()) << bits.status().message();
      EXPECT_EQ(*bits, i8_conv_w_payload_bytes(s, d.size()) * 8) << f->name;
      EXPECT_EQ(i8_conv_w_payload_bytes(s, d.size()), s.packed_bytes() + d.size() * 8);
    }
    auto sig = types::leaf_signature(none, t);
    ASSERT_TRUE(sig.ok()) << sig.status().message();
    ASSERT_EQ(sig->size(), 3u);
    EXPECT_EQ((*sig)[0].name, "panels.codes");
    EXPECT_EQ((*sig)[2].name, "shape");
    EXPECT_EQ((*sig)[2].elem_type, onnx::TensorProto::INT64);
    for (const auto& p : types::check_decoder(t.decoder(), *sig, "decoder")) {
      ADD_FAILURE() << f->name << " " << p.path << ": " << p.message;
    }
  }
  // Not a W: rank 2, an empty dim.
  EXPECT_FALSE(i8_conv_w_shape(kInt8, std::vector<int64_t>{4, 4}).ok());
  EXPECT_FALSE(i8_conv_w_shape(kInt8, std::vector<int64_t>{4, 0, 3, 3}).ok());
}

// The panels are B's (i8_gemm_b_pack of W's transpose [K, M]), then W's dims.
// A change here changes packed bytes: bump format_version before updating.
TEST(I8ConvWFormat, PanelsAreTheGemmBOfTheTransposeAndGoldenFingerprint) {
  const std::map<std::string, uint64_t> kGolden = {
      {"i8_conv_w_panel16", 0x68f598513225bfe9ull},
      {"u8_conv_w_panel16", 0x34246b182262452eull},
      {"i8_conv_w_panel16_dotprod", 0x68f598513225bfe9ull},
      {"u8_conv_w_panel16_dotprod", 0x34246b182262452eull},
  };
  const std::vector<int64_t> d = {37, 5, 3, 5};  // K 75, N 37
  const auto w = source_of(37, 75, 7);
  std::vector<uint8_t> b(w.size());
  for (int64_t n = 0; n < 37; ++n)
    for (int64_t k = 0; k < 75; ++k) b[size_t(k * 37 + n)] = w[size_t(n * 75 + k)];
  for (const I8GemmBFormat* f : i8_conv_w_formats()) {
    if (f->grouped) continue;
    const auto s = conv_shape_of(*f, d);
    const auto packed = conv_pack_of(s, w, d);
    const auto gemm = pack_of(shape_of(*i8_gemm_b_format(f->source_type), 75, 37), b);
    ASSERT_EQ(packed.size(), gemm.size() + 32);
    EXPECT_TRUE(std::equal(gemm.begin(), gemm.end(), packed.begin())) << f->name;
    std::vector<int64_t> stored(4);
    std::memcpy(stored.data(), packed.data() + gemm.size(), 32);
    EXPECT_EQ(stored, d);
    EXPECT_EQ(fnv1a64(packed.data(), packed.size()), kGolden.at(std::string(f->name)))
        << f->name << std::hex << " 0x" << fnv1a64(packed.data(), packed.size());
  }
}

// The decoder, run by ONNX Runtime on the leaves of a real pack, gives W back
// exactly: its dims and values, no padding.
TEST(I8ConvWFormat, DecoderRunsInOnnxRuntime) {
  const std::string ort_dir = testing_support::ort_dir();
  ASSERT_TRUE(std::filesystem::exists(ort_dir)) << "no " << ort_dir << ": run tools/setup.sh";
  testing::TempDir dir;
  for (const std::vector<int64_t>& d :
       {std::vector<int64_t>{18, 3, 3, 3}, std::vector<int64_t>{33, 7, 1, 1},
        std::vector<int64_t>{5, 6, 3}}) {
    int64_t k = 1;
    for (size_t i = 1; i < d.size(); ++i) k *= d[i];
    const auto w = source_of(d[0], k, 11);
    for (const I8GemmBFormat* f : i8_conv_w_formats()) {
      if (f->grouped) continue;
      const auto s = conv_shape_of(*f, d);
      const auto packed = conv_pack_of(s, w, d);
      const onnx::StructTypeProto t = i8_conv_w_struct_type(*f);
      types::Catalogue none;
      auto leaves = types::read_leaves(none, t, i8_conv_w_dims(s, d.size()), packed);
      ASSERT_TRUE(leaves.ok()) << leaves.status().message();
      const std::string got =
          testing_support::run_decoder_in_ort(t.decoder(), *leaves, 13, f->source_type, dir,
                                              std::string(f->name) + "_" + std::to_string(d[0]));
      ASSERT_EQ(got.size(), w.size()) << f->name;
      EXPECT_EQ(std::vector<uint8_t>(got.begin(), got.end()), w) << f->name << " " << d[0];
    }
  }
}

TEST(I8ConvWFormat, CheckEntryRefusesOtherDimsSourceTypesAndTypes) {
  const std::vector<int64_t> src = {18, 3, 3, 3};
  const auto s = conv_shape_of(kI8ConvWPanel16, src);
  const auto dims = i8_conv_w_dims(s, src.size());
  const auto t8 = i8_conv_w_struct_type(kI8ConvWPanel16);
  const auto tu8 = i8_conv_w_struct_type(kU8ConvWPanel16);
  EXPECT_TRUE(i8_conv_w_check_entry(kI8ConvWPanel16, t8, dims, kInt8, src).ok());
  EXPECT_TRUE(i8_conv_w_check_entry(kU8ConvWPanel16, tu8, dims, kUint8, src).ok());
  for (const std::vector<int64_t>& other :
       {std::vector<int64_t>{40, 3, 3, 3}, std::vector<int64_t>{18, 5, 3, 3},
        std::vector<int64_t>{18, 3, 3, 3, 1}}) {
    auto st = i8_conv_w_check_entry(kI8ConvWPanel16, t8, dims, kInt8, other);
    EXPECT_FALSE(st.ok()) << other.size();
    EXPECT_NE(st.message().find("dims"), std::string::npos) << st.message();
  }
  auto st = i8_conv_w_check_entry(kI8ConvWPanel16, t8, dims, kUint8, src);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("UINT8"), std::string::npos) << st.message();
  EXPECT_FALSE(i8_conv_w_check_entry(kI8ConvWPanel16, tu8, dims, kInt8, src).ok());
  // B's format of the same panels is not W's (no shape field), nor the other way round.
  EXPECT_FALSE(i8_conv_w_check_entry(kI8ConvWPanel16, i8_gemm_b_struct_type(kI8GemmBPanel16), dims,
                                     kInt8, src)
                   .ok());
  auto v2 = t8;
  for (auto& e : *v2.mutable_metadata_props())
    if (e.key() == "format_version") e.set_value("2");
  st = i8_conv_w_check_entry(kI8ConvWPanel16, v2, dims, kInt8, src);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("version"), std::string::npos) << st.message();
  auto relabelled = t8;
  for (auto& e : *relabelled.mutable_metadata_props())
    if (e.key() == "source_type") e.set_value("UINT8");
  EXPECT_FALSE(i8_conv_w_check_entry(kI8ConvWPanel16, relabelled, dims, kInt8, src).ok());
  auto no_shape = t8;  // the panels alone: 32 bytes short
  no_shape.mutable_structure()->mutable_field()->RemoveLast();
  EXPECT_FALSE(i8_conv_w_check_entry(kI8ConvWPanel16, no_shape, dims, kInt8, src).ok());
}

TEST(I8GemmBFamily, ConvIntegerAndQLinearConvWGroupOneAndGrouped) {
  const PackFamily* family = find_pack_family("i8_gemm_b");
  ASSERT_NE(family, nullptr);
  onnx::NodeProto conv;
  conv.set_op_type("ConvInteger");
  for (const char* i : {"x", "W", "x_zp", "w_zp"}) conv.add_input(i);
  const std::vector<int64_t> d = {18, 3, 3, 3};
  EXPECT_EQ(family_for(conv, 1, kInt8, d), family);
  EXPECT_EQ(family_for(conv, 1, kUint8, std::vector<int64_t>{33, 7, 1, 1}), family);
  EXPECT_FALSE(family->eligible(conv, 0, kUint8, std::vector<int64_t>{2, 3, 9, 9}));  // x
  EXPECT_FALSE(family->eligible(conv, 1, kInt8, std::vector<int64_t>{18, 27}));
  EXPECT_FALSE(family->eligible(conv, 1, onnx::TensorProto::INT32, d));
  // Depthwise (one input channel per group): the runtime's plane path.
  EXPECT_FALSE(family->eligible(conv, 1, kInt8, std::vector<int64_t>{18, 1, 3, 3}));
  onnx::NodeProto grouped = conv;
  auto* g = grouped.add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(3);
  EXPECT_TRUE(family->eligible(grouped, 1, kInt8, std::vector<int64_t>{18, 3, 3, 3}));
  g->set_i(4);  // does not divide 18 output channels
  EXPECT_FALSE(family->eligible(grouped, 1, kInt8, std::vector<int64_t>{18, 3, 3, 3}));
  g->set_i(0);
  EXPECT_FALSE(family->eligible(grouped, 1, kInt8, std::vector<int64_t>{18, 3, 3, 3}));
  g->set_i(1);
  EXPECT_TRUE(family->eligible(grouped, 1, kInt8, d));
  onnx::NodeProto ms = conv;
  ms.set_domain("com.microsoft");
  EXPECT_FALSE(family->eligible(ms, 1, kInt8, d));
  // QLinearConv's w (input 3) is the same use; its x (0) and w_zero_point (5) are not.
  onnx::NodeProto qlc;
  qlc.set_op_type("QLinearConv");
  for (const char* i : {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "B"}) qlc.add_input(i);
  EXPECT_EQ(family_for(qlc, 3, kInt8, d), family);
  EXPECT_EQ(family_for(qlc, 3, kUint8, std::vector<int64_t>{33, 7, 1, 1}), family);
  EXPECT_FALSE(family->eligible(qlc, 0, kUint8, std::vector<int64_t>{2, 3, 9, 9}));
  EXPECT_FALSE(family->eligible(qlc, 1, kInt8, d));
  EXPECT_FALSE(family->eligible(qlc, 5, kInt8, std::vector<int64_t>{18}));
  EXPECT_FALSE(family->eligible(qlc, 3, kInt8, std::vector<int64_t>{18, 1, 3, 3}));  // depthwise
  onnx::NodeProto qgrouped = qlc;
  *qgrouped.add_attribute() = *g;
  qgrouped.mutable_attribute(0)->set_i(5);
  EXPECT_FALSE(family->eligible(qgrouped, 3, kInt8, d));
  EXPECT_EQ(family_of_format("i8_conv_w_panel16"), family);
  EXPECT_EQ(family_of_format("u8_conv_w_panel16"), family);

  for (int32_t type : {kInt8, kUint8}) {
    WeightUse use;
    use.source = "W";
    use.consumer = "conv";
    use.node = &conv;
    use.input = 1;
    use.data_type = type;
    use.dims = d;
    EXPECT_EQ(family->label(use), "conv_nk");
    EXPECT_FALSE(family->lineage(use).has_value());
    const I8GemmBFormat& want = type == kInt8 ? kI8ConvWPanel16 : kU8ConvWPanel16;
    auto acc = family->accepted(use, device::IsaLevel::kAvx2);
    ASSERT_EQ(acc.size(), 1u);
    EXPECT_EQ(acc[0].name, want.name);
    auto miss = family->miss_format(use, device::IsaLevel::kRef);
    ASSERT_TRUE(miss.has_value());
    EXPECT_EQ(miss->name, want.name);
    const auto w = source_of(18, 27, 5);
    ContentFn content = [&w](const std::string&) -> Result<std::span<const uint8_t>> {
      return std::span<const uint8_t>(w);
    };
    // B's format of the same type is not this W's.
    const FormatInfo b_format = {type == kInt8 ? kI8GemmBPanel16.name : kU8GemmBPanel16.name, "1",
                                 "x86_64", device::IsaLevel::kRef};
    EXPECT_FALSE(family->plan(use, b_format, content, nullptr).ok());
    auto plan = family->plan(use, acc[0], content, nullptr);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    const auto s = conv_shape_of(want, d);
    EXPECT_EQ(plan->dims, i8_conv_w_dims(s, 4));
    EXPECT_EQ(plan->payload_bytes, i8_conv_w_payload_bytes(s, 4));
    EXPECT_EQ(plan->type.name(), want.name);
    EXPECT_TRUE(family->check_entry(use, plan->format, plan->type, plan->dims).ok());
    EXPECT_FALSE(family
                     ->check_entry(use, b_format, i8_gemm_b_struct_type(kI8GemmBPanel16),
                                   i8_gemm_b_dims(shape_of(kI8GemmBPanel16, 27, 18)))
                     .ok());
    std::vector<uint8_t> got(plan->payload_bytes);
    ASSERT_TRUE(plan->pack(got).ok());
    EXPECT_EQ(got, conv_pack_of(s, w, d));

    // The same W under a group 3 node: the grouped format, one block of panels per group.
    use.node = &grouped;
    g->set_i(3);
    const I8GemmBFormat& want_g = type == kInt8 ? kI8ConvWGroupedPanel16 : kU8ConvWGroupedPanel16;
    auto acc_g = family->accepted(use, device::IsaLevel::kAvx2);
    ASSERT_EQ(acc_g.size(), 1u);
    EXPECT_EQ(acc_g[0].name, want_g.name);
    EXPECT_FALSE(family->plan(use, acc[0], content, nullptr).ok());  // the group 1 format
    auto plan_g = family->plan(use, acc_g[0], content, nullptr);
    ASSERT_TRUE(plan_g.ok()) << plan_g.status().message();
    const auto sg = *i8_conv_w_shape(type, d, 3);
    EXPECT_EQ(sg.N, 6);
    EXPECT_EQ(plan_g->dims, i8_conv_w_dims(sg, 4, 3));
    EXPECT_TRUE(family->check_entry(use, plan_g->format, plan_g->type, plan_g->dims).ok());
    // A group 1 entry of this W is no hit for the group 3 node, nor the other way round.
    EXPECT_FALSE(family->check_entry(use, plan->format, plan->type, plan->dims).ok());
    use.node = &conv;
    EXPECT_FALSE(family->check_entry(use, plan_g->format, plan_g->type, plan_g->dims).ok());
    g->set_i(1);
  }
}

// Grouped W [M, C/group, k...]: per group the group-1 panels of its rows, one after another, then
// the dims; every byte described; the decoder gives W back in ONNX Runtime; entry checks.
std::vector<uint8_t> grouped_pack_of(const kernels::I8GemmShape& s, const std::vector<uint8_t>& w,
                                     const std::vector<int64_t>& dims, int64_t groups) {
  std::vector<uint8_t> out(i8_conv_w_payload_bytes(s, dims.size(), groups), 0xAB);
  EXPECT_TRUE(i8_conv_w_pack(s, w, dims, out, groups).ok());
  return out;
}

int64_t taps_of(const std::vector<int64_t>& d) {
  int64_t k = 1;
  for (size_t i = 1; i < d.size(); ++i) k *= d[i];
  return k;
}

TEST(I8ConvWGroupedFormat, EveryByteDescribedAndEachGroupIsItsRowsPanels) {
  types::Catalogue none;
  for (const I8GemmBFormat* f : {&kI8ConvWGroupedPanel16, &kU8ConvWGroupedPanel16,
                                 &kI8ConvWGroupedPanel16Dotprod, &kU8ConvWGroupedPanel16Dotprod}) {
    const onnx::StructTypeProto t = i8_conv_w_struct_type(*f);
    EXPECT_EQ(t.name(), f->name);
    for (const auto& [d, groups] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
             {{36, 5, 3, 3}, 2}, {{36, 5, 3, 3}, 3}, {{64, 8, 1, 1}, 32}, {{12, 4, 5}, 4}}) {
      auto s = i8_conv_w_shape(f->source_type, d, groups);
      ASSERT_TRUE(s.ok()) << s.status().message();
      EXPECT_EQ(s->N, d[0] / groups);
      EXPECT_EQ(s->K, taps_of(d));
      auto bits = types::struct_type_bits(none, t, i8_conv_w_dims(*s, d.size(), groups));
      ASSERT_TRUE(bits.ok()) << bits.status().message();
      EXPECT_EQ(*bits, i8_conv_w_payload_bytes(*s, d.size(), groups) * 8) << f->name;
      const auto w = source_of(d[0], taps_of(d), 3);
      const auto packed = grouped_pack_of(*s, w, d, groups);
      // Group g's block is the group-1 pack of W's rows [g N, (g + 1) N) as a W of its own.
      std::vector<int64_t> gd = d;
      gd[0] = s->N;
      const I8GemmBFormat& one = *i8_conv_w_format(f->source_type);
      const auto s1 = conv_shape_of(one, gd);
      const size_t rows = size_t(s->N * s->K);
      for (int64_t g = 0; g < groups; ++g) {
        const std::vector<uint8_t> wg(w.begin() + ptrdiff_t(g * rows),
                                      w.begin() + ptrdiff_t((g + 1) * rows));
        const auto p1 = conv_pack_of(s1, wg, gd);
        EXPECT_TRUE(std::equal(p1.begin(), p1.end() - ptrdiff_t(8 * gd.size()),
                               packed.begin() + ptrdiff_t(g * s->packed_bytes())))
            << f->name << " group " << g;
      }
      std::vector<int64_t> stored(d.size());
      std::memcpy(stored.data(), packed.data() + groups * s->packed_bytes(), 8 * d.size());
      EXPECT_EQ(stored, d);
    }
    auto sig = types::leaf_signature(none, t);
    ASSERT_TRUE(sig.ok()) << sig.status().message();
    ASSERT_EQ(sig->size(), 3u);
    EXPECT_EQ((*sig)[0].name, "groups.panels.codes");
    EXPECT_EQ((*sig)[2].name, "shape");
    for (const auto& p : types::check_decoder(t.decoder(), *sig, "decoder")) {
      ADD_FAILURE() << f->name << " " << p.path << ": " << p.message;
    }
  }
  // Groups that do not divide M, or none.
  EXPECT_FALSE(i8_conv_w_shape(kInt8, std::vector<int64_t>{18, 3, 3, 3}, 4).ok());
  EXPECT_FALSE(i8_conv_w_shape(kInt8, std::vector<int64_t>{18, 3, 3, 3}, 0).ok());
  EXPECT_FALSE(i8_conv_w_shape(kInt8, std::vector<int64_t>{18, 3, 3, 3}, 36).ok());
}

// A change here changes packed bytes: bump format_version before updating.
TEST(I8ConvWGroupedFormat, GoldenFingerprint) {
  const std::map<std::string, uint64_t> kGolden = {
      {"i8_conv_w_grouped_panel16", 0xd6a1852c11e1ba62ull},
      {"u8_conv_w_grouped_panel16", 0xd0c76086cfc10c24ull},
      {"i8_conv_w_grouped_panel16_dotprod", 0xd6a1852c11e1ba62ull},
      {"u8_conv_w_grouped_panel16_dotprod", 0xd0c76086cfc10c24ull},
  };
  const std::vector<int64_t> d = {36, 5, 3, 5};  // group 3: K 75, N 12
  const auto w = source_of(36, 75, 7);
  for (const I8GemmBFormat* f : {&kI8ConvWGroupedPanel16, &kU8ConvWGroupedPanel16,
                                 &kI8ConvWGroupedPanel16Dotprod, &kU8ConvWGroupedPanel16Dotprod}) {
    const auto s = *i8_conv_w_shape(f->source_type, d, 3);
    const auto packed = grouped_pack_of(s, w, d, 3);
    EXPECT_EQ(fnv1a64(packed.data(), packed.size()), kGolden.at(std::string(f->name)))
        << f->name << std::hex << " 0x" << fnv1a64(packed.data(), packed.size());
  }
}

TEST(I8ConvWGroupedFormat, DecoderRunsInOnnxRuntime) {
  const std::string ort_dir = testing_support::ort_dir();
  ASSERT_TRUE(std::filesystem::exists(ort_dir)) << "no " << ort_dir << ": run tools/setup.sh";
  testing::TempDir dir;
  for (const auto& [d, groups] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
           {{18, 3, 3, 3}, 3}, {{40, 4, 1, 1}, 2}, {{6, 6, 3}, 6}, {{34, 2, 3, 3}, 17}}) {
    const auto w = source_of(d[0], taps_of(d), 11);
    for (const I8GemmBFormat* f :
         {&kI8ConvWGroupedPanel16, &kU8ConvWGroupedPanel16, &kI8ConvWGroupedPanel16Dotprod,
          &kU8ConvWGroupedPanel16Dotprod}) {
      const auto s = *i8_conv_w_shape(f->source_type, d, groups);
      const auto packed = grouped_pack_of(s, w, d, groups);
      const onnx::StructTypeProto t = i8_conv_w_struct_type(*f);
      types::Catalogue none;
      auto leaves = types::read_leaves(none, t, i8_conv_w_dims(s, d.size(), groups), packed);
      ASSERT_TRUE(leaves.ok()) << leaves.status().message();
      const std::string got = testing_support::run_decoder_in_ort(
          t.decoder(), *leaves, 13, f->source_type, dir,
          std::string(f->name) + "_" + std::to_string(d[0]) + "_" + std::to_string(groups));
      ASSERT_EQ(got.size(), w.size()) << f->name;
      EXPECT_EQ(std::vector<uint8_t>(got.begin(), got.end()), w) << f->name << " " << d[0];
    }
  }
}

TEST(I8ConvWGroupedFormat, CheckEntryRefusesOtherGroupsAndDims) {
  const std::vector<int64_t> src = {18, 3, 3, 3};
  const auto s = *i8_conv_w_shape(kInt8, src, 3);
  const auto dims = i8_conv_w_dims(s, src.size(), 3);
  const auto t = i8_conv_w_struct_type(kI8ConvWGroupedPanel16);
  EXPECT_TRUE(i8_conv_w_check_entry(kI8ConvWGroupedPanel16, t, dims, kInt8, src, 3).ok());
  // Group 6 of the same W: other N, other dims.
  auto st = i8_conv_w_check_entry(kI8ConvWGroupedPanel16, t, dims, kInt8, src, 6);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("dims"), std::string::npos) << st.message();
  // A group 1 node, or the group 1 format for a grouped node.
  st = i8_conv_w_check_entry(kI8ConvWGroupedPanel16, t, dims, kInt8, src, 1);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("group"), std::string::npos) << st.message();
  EXPECT_FALSE(i8_conv_w_check_entry(kI8ConvWPanel16, i8_conv_w_struct_type(kI8ConvWPanel16),
                                     i8_conv_w_dims(s, src.size()), kInt8, src, 3)
                   .ok());
  EXPECT_FALSE(i8_conv_w_check_entry(kI8ConvWGroupedPanel16, t, dims, kUint8, src, 3).ok());
  auto no_shape = t;
  no_shape.mutable_structure()->mutable_field()->RemoveLast();
  EXPECT_FALSE(i8_conv_w_check_entry(kI8ConvWGroupedPanel16, no_shape, dims, kInt8, src, 3).ok());
}

}  // namespace
}  // namespace onnx_prepack::pack
