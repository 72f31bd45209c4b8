#include "runtime/constants.h"

#include <cstring>
#include <string>

namespace onnx_prepack::runtime {
namespace {

template <typename Src, typename Dst>
void copy_typed(const google::protobuf::RepeatedField<Src>& src, HostTensor& t) {
  Dst* d = static_cast<Dst*>(t.mutable_data());
  for (int i = 0; i < src.size(); ++i) d[i] = static_cast<Dst>(src.Get(i));
}

constexpr int32_t kUint4 = 21;
constexpr int32_t kInt4 = 22;

// INT4 / UINT4 are held one element per byte as INT8 / UINT8 (the runtime has no
// sub-byte type). Every operator that reads a 4-bit tensor (DequantizeLinear,
// Cast, the shape ops) gives the same values from the widened form, and the
// model's bytes (what digests cover) are never touched.
Result<HostTensor> widen_nibbles(const onnx::TensorProto& t, const format::Model* model,
                                 std::string_view context) {
  const bool is_signed = t.data_type() == kInt4;
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape) {
    if (d < 0)
      return invalid_argument(std::string(context) + ": negative dimension " + std::to_string(d));
  }
  const int32_t wide = is_signed ? kInt8 : kUint8;
  OP_ASSIGN_OR_RETURN(uint64_t n, checked_tensor_bytes(wide, shape, context));
  const uint64_t packed = n / 2 + n % 2;
  std::span<const uint8_t> span;
  std::string typed;  // int32_data entries are one packed byte each
  const auto storage = format::storage_of(t);
  if (storage == format::Storage::kRaw) {
    span = {reinterpret_cast<const uint8_t*>(t.raw_data().data()), t.raw_data().size()};
  } else if (storage == format::Storage::kExternal) {
    if (model == nullptr)
      return invalid_argument(std::string(context) + ": external data is not allowed here");
    OP_ASSIGN_OR_RETURN(auto tb, model->tensor_bytes(t, context));
    span = tb.bytes;
  } else {
    if (uint64_t(t.int32_data_size()) != packed) {
      return data_loss(std::string(context) + ": holds " + std::to_string(t.int32_data_size()) +
                       " int32_data entries, " + std::to_string(n) + " 4-bit values need " +
                       std::to_string(packed));
    }
    typed.resize(packed);
    for (uint64_t i = 0; i < packed; ++i) typed[i] = char(uint8_t(t.int32_data(int(i))));
    span = {reinterpret_cast<const uint8_t*>(typed.data()), typed.size()};
  }
  if (span.size() != packed) {
    return data_loss(std::string(context) + ": holds " + std::to_string(span.size()) + " bytes, " +
                     dtype_name(t.data_type()) + shape_string(shape) + " needs " +
                     std::to_string(packed));
  }
  OP_ASSIGN_OR_RETURN(auto h, HostTensor::try_allocate(wide, shape, context));
  auto* out = static_cast<uint8_t*>(h.mutable_data());
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t v = uint8_t((span[i / 2] >> (4 * (i % 2))) & 0x0F);  // first element: low nibble
    if (is_signed && (v & 0x08)) v = uint8_t(v | 0xF0);          // sign-extend
    out[i] = v;
  }
  return h;
}

}  // namespace

Result<HostTensor> host_tensor_from_proto(const onnx::TensorProto& t, const format::Model* model,
                                          std::string_view context,
                                          std::shared_ptr<const void> keep_alive) {
  int32_t dt = t.data_type();
  if (dt == kInt4 || dt == kUint4) {
    if (t.has_segment())
      return unimplemented(std::string(context) + ": segmented tensors are not supported");
    return widen_nibbles(t, model, context);
  }
  size_t width = dtype_size(dt);
  if (width == 0) {
    return unimplemented(std::string(context) + ": element type " + dtype_name(dt) +
                         " is not supported by the runtime");
  }
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape) {
    if (d < 0)
      return invalid_argument(std::string(context) + ": negative dimension " + std::to_string(d));
  }
  if (t.has_segment())
    return unimplemented(std::string(context) + ": segmented tensors are not supported");
  OP_ASSIGN_OR_RETURN(uint64_t bytes, checked_tensor_bytes(dt, shape, context));
  int64_t n = shape_numel(shape);
  auto storage = format::storage_of(t);
  if (storage == format::Storage::kRaw || storage == format::Storage::kExternal) {
    std::span<const uint8_t> span;
    std::shared_ptr<const void> keep = keep_alive;
    if (storage == format::Storage::kRaw) {
      span = {reinterpret_cast<const uint8_t*>(t.raw_data().data()), t.raw_data().size()};
    } else {
      if (model == nullptr)
        return invalid_argument(std::string(context) + ": external data is not allowed here");
      OP_ASSIGN_OR_RETURN(auto tb, model->tensor_bytes(t, context));
      span = tb.bytes;
      keep = tb.file;
    }
    if (span.size() != bytes) {
      return data_loss(std::string(context) + ": holds " + std::to_string(span.size()) +
                       " bytes, " + dtype_name(dt) + shape_string(shape) + " needs " +
                       std::to_string(bytes));
    }
    const bool fix_bools = dt == kBool && has_non_canonical_bools(span.data(), span.size());
    if (reinterpret_cast<uintptr_t>(span.data()) % width == 0 && !fix_bools) {
      return HostTensor::borrow(dt, shape, span.data(), std::move(keep));
    }
    OP_ASSIGN_OR_RETURN(auto h, HostTensor::try_allocate(dt, shape, context));
    if (bytes) std::memcpy(h.mutable_data(), span.data(), bytes);
    if (fix_bools) canonicalize_bools(h.mutable_data(), bytes);
    return h;
  }
  OP_ASSIGN_OR_RETURN(auto h, HostTensor::try_allocate(dt, shape, context));
  auto mismatch = [&](int have) {
    return data_loss(std::string(context) + ": holds " + std::to_string(have) + " values, " +
                     shape_string(shape) + " needs " + std::to_string(n));
  };
  switch (dt) {
    case kFloat:
      if (t.float_data_size() != n) return mismatch(t.float_data_size());
      copy_typed<float, float>(t.float_data(), h);
      break;
    case kDouble:
      if (t.double_data_size() != n) return mismatch(t.double_data_size());
      copy_typed<double, double>(t.double_data(), h);
      break;
    case kInt64:
      if (t.int64_data_size() != n) return mismatch(t.int64_data_size());
      copy_typed<int64_t, int64_t>(t.int64_data(), h);
      break;
    case kUint32:
    case kUint64:
      if (t.uint64_data_size() != n) return mismatch(t.uint64_data_size());
      if (dt == kUint32)
        copy_typed<uint64_t, uint32_t>(t.uint64_data(), h);
      else
        copy_typed<uint64_t, uint64_t>(t.uint64_data(), h);
      break;
    default: {  // int32, int16, int8, uint16, uint8, bool, float16, bfloat16 in int32_data
      if (width > 4)
        return unimplemented(std::string(context) + ": typed storage of " + dtype_name(dt));
      if (t.int32_data_size() != n) return mismatch(t.int32_data_size());
      void* d = h.mutable_data();
      for (int64_t i = 0; i < n; ++i) {
        int32_t v = t.int32_data(int(i));
        if (dt == kBool)
          static_cast<uint8_t*>(d)[i] = v != 0;
        else if (width == 1)
          static_cast<uint8_t*>(d)[i] = uint8_t(v);
        else if (width == 2)
          static_cast<uint16_t*>(d)[i] = uint16_t(v);
        else
          static_cast<int32_t*>(d)[i] = v;
      }
    }
  }
  return h;
}

}  // namespace onnx_prepack::runtime
