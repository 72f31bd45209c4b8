// The structured reader: overlays a concrete type on a payload and extracts the
// canonical leaf view (format.md §3). Every read is inside the payload: the type's
// size must equal the payload length exactly before anything is read.
#include <cstring>

#include "base/checked_arith.h"
#include "format/data_type.h"
#include "types/constant.h"
#include "types/struct_type.h"

namespace onnx_prepack::types {

void copy_bits(const uint8_t* src, uint64_t src_bit, uint8_t* dst, uint64_t dst_bit,
               uint64_t nbits) {
  if (nbits == 0) return;
  if (src_bit % 8 == 0 && dst_bit % 8 == 0) {
    std::memcpy(dst + dst_bit / 8, src + src_bit / 8, size_t(nbits / 8));
    src_bit += nbits / 8 * 8;
    dst_bit += nbits / 8 * 8;
    nbits %= 8;
  }
  while (nbits > 0) {
    // Take up to the end of the current source byte and of the destination byte.
    uint32_t s_off = uint32_t(src_bit % 8), d_off = uint32_t(dst_bit % 8);
    uint32_t n = 8 - (s_off > d_off ? s_off : d_off);
    if (n > nbits) n = uint32_t(nbits);
    uint32_t mask = (1u << n) - 1u;
    uint32_t v = (uint32_t(src[src_bit / 8]) >> s_off) & mask;
    uint8_t& d = dst[dst_bit / 8];
    d = uint8_t((d & ~(mask << d_off)) | (v << d_off));
    src_bit += n;
    dst_bit += n;
    nbits -= n;
  }
}

Result<std::vector<LeafTensor>> read_leaves(const Catalogue& catalogue,
                                            const onnx::StructTypeProto& type,
                                            std::span<const uint64_t> dims,
                                            std::span<const uint8_t> payload,
                                            const TypeLimits& limits) {
  OP_ASSIGN_OR_RETURN(uint64_t bits, struct_type_bits(catalogue, type, dims));
  if (bits % 8 != 0) {
    return invalid_argument("type '" + type.name() + "' is " + std::to_string(bits) +
                            " bits, not a whole number of bytes");
  }
  if (bits / 8 != payload.size()) {
    return invalid_argument("payload is " + std::to_string(payload.size()) + " bytes, type '" +
                            type.name() + "' needs " + std::to_string(bits / 8));
  }
  OP_ASSIGN_OR_RETURN(std::vector<Leaf> leaves, leaf_layout(catalogue, type, dims, limits));
  std::vector<LeafTensor> out;
  out.reserve(leaves.size());
  const uint64_t total_bits = bits;
  for (const Leaf& leaf : leaves) {
    LeafTensor t;
    t.name = leaf.name;
    t.elem_type = leaf.elem_type;
    t.constant = leaf.constant;
    for (const auto& d : leaf.dims) t.dims.push_back(d.value);
    if (leaf.constant) {
      OP_ASSIGN_OR_RETURN(t.data, constant_bytes(*leaf.constant));
      out.push_back(std::move(t));
      continue;
    }
    // Elements: product of dims; each instance fits in the payload, so the
    // count times the width is bounded by the payload's bits (or is zero).
    uint64_t count = 1;
    for (uint64_t d : t.dims) {
      if (d == 0) {
        count = 0;
        break;
      }
      const std::optional<uint64_t> c = base::checked_mul(count, d);
      if (!c) return out_of_range("leaf element count overflows");
      count = *c;
    }
    uint32_t out_bits = format::data_type_bits(leaf.elem_type);  // canonical width
    const std::optional<uint64_t> leaf_bits = base::checked_mul(count, uint64_t(out_bits));
    const uint64_t out_total = leaf_bits.value_or(0);
    if (!leaf_bits || out_total / 8 > payload.size() * 8 + 8) {
      return out_of_range("leaf '" + leaf.name + "' is larger than its payload");
    }
    t.data.assign(size_t((out_total + 7) / 8), 0);
    const size_t rank = t.dims.size();
    std::vector<uint64_t> index(rank, 0);
    for (uint64_t e = 0; e < count; ++e) {
      uint64_t at = leaf.offset_bits;
      for (size_t k = 0; k < rank; ++k) at += index[k] * leaf.stride_bits[k];
      if (at > total_bits || leaf.bit_width > total_bits - at) {
        return internal_error("leaf '" + leaf.name + "' element " + std::to_string(e) + " at bit " +
                              std::to_string(at) + " is outside the payload");
      }
      // A component narrower than its output type is zero-extended (data is zeroed).
      copy_bits(payload.data(), at, t.data.data(), e * out_bits, leaf.bit_width);
      for (size_t k = rank; k-- > 0;) {
        if (++index[k] < t.dims[k]) break;
        index[k] = 0;
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace onnx_prepack::types
