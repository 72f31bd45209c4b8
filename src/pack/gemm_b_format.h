// Persisted formats of a MatMul/Gemm B operand in f32 panels (docs/formats.md).
// A format is the bundle {name, format_version, panel width, source layout,
// source element type, architecture its kernel needs}; its StructTypeProto,
// decoder and pack routine are built from that bundle in gemm_b_panels.cc,
// and each panel width has its own file (f32_gemm_b_n16.cc, f32_gemm_b_n32.cc,
// f32_gemm_b_n12.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "kernels/f32_gemm/f32_gemm.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::pack {

struct GemmBFormat {
  std::string_view name;          // StructTypeProto.name, stable
  std::string_view version;       // metadata_props["format_version"]
  std::string_view architecture;  // DeviceProto.architecture of packs in this format
  device::IsaLevel isa;           // level of the kernel that reads it natively
  uint32_t nr;                    // panel width (columns)
  kernels::PackSourceLayout layout;
  int32_t source_type;  // onnx::TensorProto::FLOAT or FLOAT16
};

// The panel formats of each width, defined in their own files.
extern const GemmBFormat kF32GemmBN32[4];
extern const GemmBFormat kF32GemmBN16[4];
extern const GemmBFormat kF32GemmBN12[4];  // aarch64 NEON

// The weight a format packs: dims [k, n] for kKN, [n, k] for kNK.
struct GemmBSource {
  std::span<const uint8_t> bytes;  // canonical raw content (FLOAT or FLOAT16 bits)
  int32_t type = 0;                // onnx::TensorProto::FLOAT or FLOAT16
  kernels::PackSourceLayout layout = kernels::PackSourceLayout::kKN;
  size_t k = 0;
  size_t n = 0;
};

// Reads k, n and the layout from a 2-D source shape: kKN = [k, n], kNK = [n, k].
Result<GemmBSource> gemm_b_source(std::span<const uint8_t> bytes, int32_t type,
                                  std::span<const int64_t> dims, kernels::PackSourceLayout layout);

// Dimension parameters of a pack: {full_panels, k, tail_cols, tail_pad}.
std::vector<uint64_t> gemm_b_dims(const GemmBFormat& f, size_t k, size_t n);
uint64_t gemm_b_payload_bytes(const GemmBFormat& f, size_t k, size_t n);

// The format's StructTypeProto: name, format_version and source metadata,
// dims_param, layout describing every byte, and the decoder.
onnx::StructTypeProto gemm_b_struct_type(const GemmBFormat& f);

// Checks that `type` is this format's type (name and format_version) and that
// `dims` are those of a pack of `source`; errors name what differs.
Status gemm_b_check_entry(const GemmBFormat& f, const onnx::StructTypeProto& type,
                          std::span<const uint64_t> dims, int32_t source_type,
                          std::span<const int64_t> source_dims);

// Packs `src` into `out` (exactly gemm_b_payload_bytes). Works on every host:
// the bytes do not depend on the host, only the speed does. Deterministic.
Status gemm_b_pack(const GemmBFormat& f, const GemmBSource& src, std::span<uint8_t> out,
                   base::ThreadPool* pool = nullptr);

}  // namespace onnx_prepack::pack
