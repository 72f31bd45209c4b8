// Persisted formats of com.microsoft::MatMulNBits weights (docs/formats.md):
// the panel records of kernels/q4_gemm/q4_gemm.h, one format per bit width.
// A pack reads B (primary), scales, zero points (and records bias), so every
// entry carries its lineage (format.md §4.5): roles scales, zero_points, bias and
// attributes bits, block_size, K, N, accuracy_level.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "device/isa_names.h"
#include "digest/digest.h"
#include "format/model.h"
#include "kernels/q4_gemm/q4_gemm.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"
#include "resolve/lineage.h"
#include "resolve/resolver.h"

namespace onnx_prepack::pack {

struct QGemmBFormat {
  std::string_view name;          // StructTypeProto.name
  std::string_view version;       // format_version
  std::string_view architecture;  // the device of its entries
  int bits;
  device::IsaLevel isa;  // the level whose kernels read it (ref: every x86-64 kernel)
};

// One byte layout, two architectures: the x86-64 formats (read by every x86-64
// kernel, the portable one included) and the aarch64 ones, the same bytes under
// another name for devices aarch64-dotprod (read by the SDOT level-4 and NEON
// level-0 kernels; a host without dotprod misses them as incompatible_device).
extern const QGemmBFormat kQ4GemmBPanel16;         // bits 4, x86_64
extern const QGemmBFormat kQ8GemmBPanel16;         // bits 8, x86_64
extern const QGemmBFormat kQ4GemmBPanel16Aarch64;  // bits 4, aarch64-dotprod
extern const QGemmBFormat kQ8GemmBPanel16Aarch64;  // bits 8, aarch64-dotprod
// All four, x86-64 first.
std::span<const QGemmBFormat* const> q_gemm_b_formats();
// The format of a bit width for a machine's kernels.
const QGemmBFormat* q_gemm_b_format(int bits, device::Machine machine = device::Machine::kX86_64);
const QGemmBFormat* find_q_gemm_b_format(std::string_view name);

// dims {panels, k_blocks, code_bytes} and the payload size.
std::vector<uint64_t> q_gemm_b_dims(const kernels::QGemmShape& s);
uint64_t q_gemm_b_payload_bytes(const kernels::QGemmShape& s);
onnx::StructTypeProto q_gemm_b_struct_type(const QGemmBFormat& f);
// Checks name, version and dims against the node's shape.
Status q_gemm_b_check_entry(const QGemmBFormat& f, const onnx::StructTypeProto& type,
                            std::span<const uint64_t> dims, const kernels::QGemmShape& s);

// The MatMulNBits node's lineage: roles scales, zero_points, bias (inputs 2, 3,
// 5; "" when absent) and its attributes, as the entry records them.
resolve::LineageRequest matmul_nbits_lineage(const onnx::NodeProto& node);

// The node's shape from its attributes; an error for values MatMulNBits refuses.
Result<kernels::QGemmShape> matmul_nbits_shape(const onnx::NodeProto& node);

// One MatMulNBits weight `compile` packs: its node and what the entry needs.
struct QGemmBJob {
  std::string source;  // B
  const onnx::NodeProto* node = nullptr;
  kernels::QGemmShape shape;
  const QGemmBFormat* format = nullptr;
};

// A com.microsoft::MatMulNBits node whose B, scales and zero points are
// unique main-graph initializers (not graph inputs) with the sizes the
// attributes imply and no g_idx: a weight compile packs (the node may be in
// any graph of the model); nullopt when it fails one of these.
std::optional<QGemmBJob> q_gemm_b_job(const format::Model& model, const onnx::NodeProto& node);

// Packs a job's payload from the model's initializers (q_gemm_b_payload_bytes
// bytes, `out` 64-byte aligned).
Status q_gemm_b_pack_job(const format::Model& model, const QGemmBJob& job, std::span<uint8_t> out);

}  // namespace onnx_prepack::pack
