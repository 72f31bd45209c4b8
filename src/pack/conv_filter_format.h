// Persisted formats of a Conv filter (docs/formats.md, "Conv filters"). A
// FLOAT (or FLOAT16, the _f16 formats) filter W [M, C/group, k...] (rank 3 to 5) of a node with
// `group`:
//
// - blocked, `mr` rows (f32_conv_filter_m14 for AVX-512, _m6 for AVX2, _m8
//   for aarch64 NEON): per
//   group, the Mg = M / group output channels in blocks of mr, each block K =
//   C/group * prod(k) rows of mr values (a[k * mr + i] = W[g * Mg + b * mr + i][k]),
//   then the last partial block of tail_rows = Mg % mr channels in the same
//   order; the blocked Conv kernel (kernels/f32_conv) reads it in place.
// - depthwise (f32_conv_dw_avx512 / _avx2 / _neon, group == M, C/group == 1, 1-D or
//   2-D): the taps [M][prod(k)] as the depthwise kernel reads them.
//
// - transposed, `mr` rows (f32_deconv_filter_m14 / _m6 / _m8): a ConvTranspose filter
//   W [C, M/group, k...] seen as the GEMM operand the ConvTranspose kernel
//   multiplies by the input, A_g [Mg * prod(k)][C/group] with
//   A_g[r][c] = W[g * C/group + c][r] (r runs over output channel and tap), in
//   the blocked layout above (Mg' = M/group * prod(k) rows, K = C/group).
//
// All end with the filter's shape (INT64[rank]) so that the decoder rebuilds W.
// Packing is deterministic and does not depend on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "device/cpu_features.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::pack {

struct ConvFilterFormat {
  std::string_view name;
  std::string_view version;
  std::string_view architecture;
  device::IsaLevel isa;
  uint32_t mr;              // rows per block; 0 = depthwise taps
  bool transposed = false;  // a ConvTranspose filter [C, M/group, k...]
  // The source's element type: FLOAT, or FLOAT16 widened exactly when packed
  // (the payload is the same f32 layout; only the decoder's Cast and the
  // source_type metadata differ).
  int32_t source_type = onnx::TensorProto::FLOAT;
};

// Best first: blocked AVX-512, blocked AVX2, depthwise AVX-512, depthwise AVX2,
// transposed AVX-512, transposed AVX2; then the same six for FLOAT16 sources
// (names ending in _f16); then the aarch64 NEON ones (blocked m8, depthwise,
// transposed m8, and their _f16 twins).
std::span<const ConvFilterFormat* const> conv_filter_formats();
const ConvFilterFormat* find_conv_filter_format(std::string_view name);

// A filter to pack: its dims and the node's group.
struct ConvFilterSource {
  std::span<const uint8_t> bytes;  // FLOAT or FLOAT16, canonical raw content
  int32_t type = onnx::TensorProto::FLOAT;
  std::vector<int64_t> dims;  // Conv [M, C/group, k...]; ConvTranspose [C, M/group, k...]
  int64_t group = 1;
  bool transposed = false;  // a ConvTranspose filter
  // The blocked operand's rows (all groups) and row length: Conv M and
  // C/group * prod(k); ConvTranspose M * prod(k) and C/group.
  size_t m() const;
  size_t k() const;
};

// Checks type, rank, positive dims, group and byte count.
Result<ConvFilterSource> conv_filter_source(std::span<const uint8_t> bytes, int32_t type,
                                            std::span<const int64_t> dims, int64_t group,
                                            bool transposed = false);

// Whether a depthwise format applies: group == M, C/group == 1, rank <= 4 (Conv only).
bool conv_filter_is_depthwise(std::span<const int64_t> dims, int64_t group);

// Formats that can pack this filter (blocked, depthwise or transposed by its
// shape and node), whose kernel runs natively at `level` (all of them at kAvx512), best first.
std::vector<const ConvFilterFormat*> conv_filter_formats_for(
    std::span<const int64_t> dims, int64_t group, device::IsaLevel level, bool transposed = false,
    int32_t source_type = onnx::TensorProto::FLOAT);
// What the runtime packs into on a miss: the format whose rows are `mr` (the
// host kernel's; 0 = depthwise) native at `level` (else the least demanding
// one of those rows); nullptr when none fits the filter.
const ConvFilterFormat* conv_filter_format_for_rows(std::span<const int64_t> dims, int64_t group,
                                                    size_t mr, device::IsaLevel level,
                                                    bool transposed = false,
                                                    int32_t source_type = onnx::TensorProto::FLOAT);

// Dimension parameters: blocked {groups, full_blocks, k, tail_rows, rank},
// depthwise {channels, taps, rank}.
std::vector<uint64_t> conv_filter_dims(const ConvFilterFormat& f, const ConvFilterSource& s);
uint64_t conv_filter_payload_bytes(const ConvFilterFormat& f, const ConvFilterSource& s);
onnx::StructTypeProto conv_filter_struct_type(const ConvFilterFormat& f);

// Packs `s` into `out` (exactly conv_filter_payload_bytes, 4-byte aligned).
Status conv_filter_pack(const ConvFilterFormat& f, const ConvFilterSource& s,
                        std::span<uint8_t> out);

// Checks an entry's type (name, format_version) and dims against a filter of
// this type, shape and group; errors name what differs.
Status conv_filter_check_entry(const ConvFilterFormat& f, const onnx::StructTypeProto& type,
                               std::span<const uint64_t> dims, int32_t source_type,
                               std::span<const int64_t> source_dims, int64_t group);

}  // namespace onnx_prepack::pack
