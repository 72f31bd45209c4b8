// Struct types (format.md §3): validation lives in check/, this is the size function
// and the leaf view used by check, pack, resolve and inspect.
//
// Every function here is safe on unvalidated input: it returns the first
// problem it meets as a Status (check/ reports all of them with rule ids).
// Catalogue references are memoised, so shared sub-types never make the work
// exponential, and the nesting depth and leaf count are bounded by TypeLimits.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::types {

using Catalogue = google::protobuf::RepeatedPtrField<onnx::StructTypeProto>;

// Bounds applied while walking a type (format.md §3 resource limits, docs/struct-types.md).
struct TypeLimits {
  uint32_t max_nesting_depth = 64;  // concrete declarations on one root-to-leaf path
  uint32_t max_fields = 4096;       // fields per structure, components per packed array
  uint64_t max_leaves = 65536;      // canonical leaves of one type (decision)
};

// Size in bits of a concrete type given the root's dims (one per dims_param),
// resolving type_index against `catalogue` (ModelProto.struct_types). Checked
// uint64 arithmetic; errors for cycles, bad indices, overflow, unset counts.
Result<uint64_t> struct_type_bits(
    const google::protobuf::RepeatedPtrField<onnx::StructTypeProto>& catalogue,
    const onnx::StructTypeProto& type, std::span<const uint64_t> dims);

// Byte size of a type without dimension parameters; nullopt when it has any
// or is invalid (used by `inspect`).
std::optional<uint64_t> static_byte_size(const onnx::ModelProto& model,
                                         const onnx::StructTypeProto& type);

// The concrete type of a StructProto value: catalogue entry or inline type.
Result<const onnx::StructTypeProto*> value_type(const onnx::ModelProto& model,
                                                const onnx::StructProto& value);

// Bytes a StructProto value's payload must have (type resolved, dims applied).
Result<uint64_t> value_byte_size(const onnx::ModelProto& model, const onnx::StructProto& value);

// ---- canonical leaf view (format.md §3) ----

// One leaf dimension: a constant count, or dims_param[param] of the root.
struct LeafDim {
  uint64_t value = 0;
  int32_t param = -1;  // >= 0: symbolic (only in leaf_signature)
  bool operator==(const LeafDim&) const = default;
};

// A canonical leaf: the scalars of one field (or packed component) repeated by
// its enclosing arrays, grouped as one tensor whose leading dims are the array
// counts, outermost first. A constant field is a leaf with its own dims.
struct Leaf {
  std::string name;        // field names joined by '.', component name, or "element"
  int32_t elem_type = 0;   // TensorProto.DataType (UINT8..UINT64 for components)
  uint32_t bit_width = 0;  // stored bits per element; 0 for constants
  std::vector<LeafDim> dims;
  // Concrete layouts only (leaf_layout): bit stride per dim and the bit offset
  // of element [0, ..., 0] from the start of the payload.
  std::vector<uint64_t> stride_bits;
  uint64_t offset_bits = 0;
  const onnx::TensorProto* constant = nullptr;  // set for constant fields
};

// Element type of a packed-array component leaf: the narrowest of UINT8,
// UINT16, UINT32, UINT64 holding `bit_width` bits (0 when above 64).
int32_t component_elem_type(uint32_t bit_width);

// Leaves with symbolic dims (counts from dims_param stay parameters).
Result<std::vector<Leaf>> leaf_signature(const Catalogue& catalogue,
                                         const onnx::StructTypeProto& type,
                                         const TypeLimits& limits = {});
// Leaves with concrete dims, strides and offsets for the root dims `dims`.
Result<std::vector<Leaf>> leaf_layout(const Catalogue& catalogue, const onnx::StructTypeProto& type,
                                      std::span<const uint64_t> dims,
                                      const TypeLimits& limits = {});

// Number of canonical leaves and nesting height of a type (checked, memoised).
struct TypeShape {
  uint64_t leaves = 0;
  uint32_t height = 0;  // concrete declarations on the longest path
};
Result<TypeShape> type_shape(const Catalogue& catalogue, const onnx::StructTypeProto& type,
                             const TypeLimits& limits = {});

// ---- structured reader ----

// A leaf read out of a payload, in canonical raw form (TensorProto.raw_data
// layout: little-endian, sub-byte types packed LSB-first, BOOL one byte).
struct LeafTensor {
  std::string name;
  int32_t elem_type = 0;
  std::vector<uint64_t> dims;
  std::vector<uint8_t> data;
  const onnx::TensorProto* constant = nullptr;  // constant leaves: the declaring tensor
};

// Overlays `type` with root dims `dims` on `payload` (whose length must equal
// the type's size exactly) and extracts every leaf; bit fields and multi-byte
// leaves at unaligned offsets are read LSB-first. Constants are attached with
// their canonical bytes.
Result<std::vector<LeafTensor>> read_leaves(const Catalogue& catalogue,
                                            const onnx::StructTypeProto& type,
                                            std::span<const uint64_t> dims,
                                            std::span<const uint8_t> payload,
                                            const TypeLimits& limits = {});

// Copies `nbits` bits from `src` at bit `src_bit` to `dst` at bit `dst_bit`
// (LSB-first numbering). The caller guarantees both ranges are in bounds.
void copy_bits(const uint8_t* src, uint64_t src_bit, uint8_t* dst, uint64_t dst_bit,
               uint64_t nbits);

}  // namespace onnx_prepack::types
