// Persisted formats of an 8-bit integer GEMM B (MatMulInteger's constant 2-D
// B [K, N]; docs/formats.md): the "i8 panel16" layout of
// kernels/i8_gemm/i8_gemm.h, one format per source element type (int8 B is
// stored as is, uint8 B as B - 128, so the two never share an entry). Every
// kernel (VNNI, AVX2, ref) reads the same bytes: the architecture is the
// baseline "x86_64". aarch64 has its own named formats of the same bytes
// (architecture "aarch64-dotprod", level dotprod: the SDOT kernel,
// i8_gemm_dotprod.cc), so an x86-64 entry and an aarch64 one never stand for
// each other and a NEON-only host rejects the aarch64 entry naming dotprod. The
// pack reads B alone (zero points are applied at run time), so the entries
// carry no lineage.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/i8_gemm/i8_gemm.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::pack {

struct I8GemmBFormat {
  std::string_view name;          // StructTypeProto.name
  std::string_view version;       // format_version
  std::string_view architecture;  // baseline: every kernel (ref included) reads the bytes
  int32_t source_type;            // onnx::TensorProto::INT8 or UINT8
  bool grouped = false;           // i8_conv_w only: W of group > 1, one block of panels per group
  device::IsaLevel isa = device::IsaLevel::kRef;  // kDotprod: the aarch64 formats
};

extern const I8GemmBFormat kI8GemmBPanel16;  // int8 B
extern const I8GemmBFormat kU8GemmBPanel16;  // uint8 B, stored minus 128
// The same bytes for aarch64 at dotprod ("aarch64-dotprod").
extern const I8GemmBFormat kI8GemmBPanel16Dotprod;
extern const I8GemmBFormat kU8GemmBPanel16Dotprod;
// Every B format, the x86-64 ones first.
std::span<const I8GemmBFormat* const> i8_gemm_b_formats();
// The baseline (x86-64) format of B's element type (nullptr: not int8 or uint8).
const I8GemmBFormat* i8_gemm_b_format(int32_t source_type);
// The aarch64 (dotprod) format of the same source type and kind as `f` (B or conv W, grouped or
// not); nullptr when `f` is already an aarch64 one.
const I8GemmBFormat* i8_aarch64_twin(const I8GemmBFormat& f);
const I8GemmBFormat* find_i8_gemm_b_format(std::string_view name);

// The kernel shape of a 2-D source [K, N] of `source_type`; an error for other
// ranks and types, and for an empty B (nothing to pack).
Result<kernels::I8GemmShape> i8_gemm_b_shape(int32_t source_type, std::span<const int64_t> dims);

// dims {panels, k_groups} and the payload size (panels * (64 k_groups + 64)).
std::vector<uint64_t> i8_gemm_b_dims(const kernels::I8GemmShape& s);
uint64_t i8_gemm_b_payload_bytes(const kernels::I8GemmShape& s);
// The format's StructTypeProto: every byte described, metadata and decoder.
onnx::StructTypeProto i8_gemm_b_struct_type(const I8GemmBFormat& f);
// Checks name, version, source type and dims against B's type and shape.
Status i8_gemm_b_check_entry(const I8GemmBFormat& f, const onnx::StructTypeProto& type,
                             std::span<const uint64_t> dims, int32_t source_type,
                             std::span<const int64_t> source_dims);

// Packs B (canonical content, K * N bytes, row-major [K, N]) into `out`
// (exactly i8_gemm_b_payload_bytes, 64-byte aligned): kernels::i8_pack_b.
Status i8_gemm_b_pack(const kernels::I8GemmShape& s, std::span<const uint8_t> b,
                      std::span<uint8_t> out);

// ConvInteger's and QLinearConv's constant W [M, C/group, k...] as the same panels: per group,
// B [K, N] with K = C/group * prod(kernel), N = M/group, packed from the group's rows of W (B's
// transpose), the groups one after another, then W's dims (int64 [rank]) so that the decoder
// rebuilds W exactly. Group 1 and group > 1 are two formats per source type (the grouped one has a
// groups dimension); the group 1 formats are those of 2026-12-01, unchanged.
extern const I8GemmBFormat kI8ConvWPanel16;         // int8 W, group 1
extern const I8GemmBFormat kU8ConvWPanel16;         // uint8 W, group 1, stored minus 128
extern const I8GemmBFormat kI8ConvWGroupedPanel16;  // int8 W, group > 1
extern const I8GemmBFormat kU8ConvWGroupedPanel16;  // uint8 W, group > 1, stored minus 128
// The same four for aarch64 at dotprod ("aarch64-dotprod").
extern const I8GemmBFormat kI8ConvWPanel16Dotprod;
extern const I8GemmBFormat kU8ConvWPanel16Dotprod;
extern const I8GemmBFormat kI8ConvWGroupedPanel16Dotprod;
extern const I8GemmBFormat kU8ConvWGroupedPanel16Dotprod;
// Every W format, the x86-64 ones first; i8_conv_w_format gives the baseline one.
std::span<const I8GemmBFormat* const> i8_conv_w_formats();
const I8GemmBFormat* i8_conv_w_format(int32_t source_type, int64_t groups = 1);
const I8GemmBFormat* find_i8_conv_w_format(std::string_view name);

// The kernel shape of one group of W (rank >= 3, int8 or uint8, dims[0] a multiple of groups):
// K = dims[1] * prod(dims[2..]), N = dims[0] / groups.
Result<kernels::I8GemmShape> i8_conv_w_shape(int32_t source_type, std::span<const int64_t> dims,
                                             int64_t groups = 1);
// dims {panels, k_groups, rank} (group 1) or {groups, panels, k_groups, rank}; payload: the
// groups' panels, then 8 * rank bytes of dims.
std::vector<uint64_t> i8_conv_w_dims(const kernels::I8GemmShape& s, size_t rank,
                                     int64_t groups = 1);
uint64_t i8_conv_w_payload_bytes(const kernels::I8GemmShape& s, size_t rank, int64_t groups = 1);
onnx::StructTypeProto i8_conv_w_struct_type(const I8GemmBFormat& f);
Status i8_conv_w_check_entry(const I8GemmBFormat& f, const onnx::StructTypeProto& type,
                             std::span<const uint64_t> dims, int32_t source_type,
                             std::span<const int64_t> source_dims, int64_t groups = 1);
// Packs W (canonical content, row-major [M, C/group, k...]) into `out` (exactly
// i8_conv_w_payload_bytes, 64-byte aligned): per group kernels::i8_pack_b transposed, then the
// dims.
Status i8_conv_w_pack(const kernels::I8GemmShape& s, std::span<const uint8_t> w,
                      std::span<const int64_t> source_dims, std::span<uint8_t> out,
                      int64_t groups = 1);

}  // namespace onnx_prepack::pack
