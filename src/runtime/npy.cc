#include "runtime/npy.h"

#include <cstring>

#include "base/atomic_file.h"
#include "base/mapped_file.h"
#include "runtime/checked_math.h"

namespace onnx_prepack::runtime {
namespace {

struct Descr {
  const char* text;
  int32_t dtype;
};
constexpr Descr kDescrs[] = {
    {"<f4", kFloat},
    {"<f8", kDouble},
    {"<f2", kFloat16},
    {"<i8", kInt64},
    {"<i4", kInt32},
    {"<i2", kInt16},
    {"|i1", kInt8},
    {"|u1", kUint8},
    {"<u2", kUint16},
    {"<u4", kUint32},
    {"<u8", kUint64},
    {"|b1", kBool},
    // No numpy type: ml_dtypes' bfloat16 and float8 arrays save as raw bytes
    // of their width. Read as the first entry of the width; read_npy_as()
    // takes the graph's type.
    {"<V2", kBfloat16},
    {"|V1", kFloat8E4M3FN},
    {"|V1", kFloat8E4M3FNUZ},
    {"|V1", kFloat8E5M2},
    {"|V1", kFloat8E5M2FNUZ},
};

// Raw containers a 16- or 8-bit float may arrive in: its own void descr, or
// the unsigned integer of its width (its bits).
bool holds_bits_of(int32_t file_type, int32_t want) {
  bool narrow_float = want == kFloat16 || want == kBfloat16 || want == kFloat8E4M3FN ||
                      want == kFloat8E4M3FNUZ || want == kFloat8E5M2 || want == kFloat8E5M2FNUZ;
  if (!narrow_float || dtype_size(file_type) != dtype_size(want)) return false;
  return file_type == kBfloat16 || file_type == kFloat8E4M3FN || file_type == kUint16 ||
         file_type == kUint8;
}

// Value of `'key': ...` in the header dict, up to the next top-level comma/brace.
std::string dict_value(const std::string& h, const std::string& key) {
  auto k = h.find("'" + key + "'");
  if (k == std::string::npos) return "";
  auto colon = h.find(':', k);
  if (colon == std::string::npos) return "";
  size_t i = colon + 1;
  while (i < h.size() && h[i] == ' ') ++i;
  int depth = 0;
  size_t j = i;
  for (; j < h.size(); ++j) {
    char c = h[j];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) break;
  }
  if (j < h.size() && h[j] == ')') ++j;
  return h.substr(i, j - i);
}

}  // namespace

Result<HostTensor> parse_npy(std::string_view b, const std::string& ctx) {
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) {
    return invalid_argument(ctx + ": not a .npy file (bad magic)");
  }
  uint8_t major = uint8_t(b[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = uint8_t(b[8]) | size_t(uint8_t(b[9])) << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return invalid_argument(ctx + ": truncated header");
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= size_t(uint8_t(b[size_t(8 + i)])) << (8 * i);
    hstart = 12;
  } else {
    return invalid_argument(ctx + ": .npy version " + std::to_string(major) + " is not supported");
  }
  if (hstart + hlen > b.size())
    return invalid_argument(ctx + ": header runs past the end of the file");
  std::string h(b.substr(hstart, hlen));
  std::string descr = dict_value(h, "descr");
  std::string fortran = dict_value(h, "fortran_order");
  std::string shape_text = dict_value(h, "shape");
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"'))
    descr = descr.substr(1, descr.size() - 2);
  if (descr == "|V2") descr = "<V2";
  int32_t dtype = kUndefined;
  for (const auto& d : kDescrs) {
    if (dtype != kUndefined) break;  // the first entry of a descr
    if (descr == d.text ||
        (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(d.text).substr(1)))
      dtype = d.dtype;
  }
  if (dtype == kUndefined)
    return invalid_argument(ctx + ": element type '" + descr + "' is not supported");
  if (fortran.rfind("False", 0) != 0)
    return invalid_argument(ctx + ": Fortran-order arrays are not supported");
  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')') {
    return invalid_argument(ctx + ": cannot read the shape '" + shape_text + "'");
  }
  Shape shape;
  std::string inner = shape_text.substr(1, shape_text.size() - 2);
  size_t p = 0;
  while (p < inner.size()) {
    while (p < inner.size() && (inner[p] == ' ' || inner[p] == ',')) ++p;
    if (p >= inner.size()) break;
    size_t q = p;
    int64_t v = 0;
    while (q < inner.size() && inner[q] >= '0' && inner[q] <= '9') {
      v = v * 10 + (inner[q] - '0');
      if (v > (int64_t(1) << 40)) return invalid_argument(ctx + ": dimension too large");
      ++q;
    }
    if (q == p) return invalid_argument(ctx + ": cannot read the shape '" + shape_text + "'");
    while (q < inner.size() && inner[q] == 'L') ++q;
    shape.push_back(v);
    p = q;
  }
  size_t data_at = hstart + hlen;
  // Each dim is at most 2^40 but their product is the file's to choose.
  const std::optional<int64_t> count = checked_product(shape);
  if (!count) return invalid_argument(ctx + ": shape " + shape_string(shape) + " overflows");
  const std::optional<uint64_t> need_bytes = checked_mul(uint64_t(*count), dtype_size(dtype));
  if (!need_bytes) return invalid_argument(ctx + ": shape " + shape_string(shape) + " overflows");
  const uint64_t need = *need_bytes;
  if (b.size() - data_at != need) {
    return invalid_argument(ctx + ": holds " + std::to_string(b.size() - data_at) +
                            " data bytes, " + dtype_name(dtype) + shape_string(shape) + " needs " +
                            std::to_string(need));
  }
  OP_ASSIGN_OR_RETURN(auto t, HostTensor::try_allocate(dtype, shape, ctx));
  if (need) std::memcpy(t.mutable_data(), b.data() + data_at, need);
  return t;
}

Result<HostTensor> read_npy(const std::string& path) {
  // Mapped, not read: the header and the size are checked before anything is
  // allocated, and the data is copied once, into the tensor.
  Result<std::shared_ptr<base::MappedFile>> mapped = base::MappedFile::open(path);
  if (mapped.ok()) {
    const std::span<const uint8_t> b = (*mapped)->bytes();
    return parse_npy(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()), path);
  }
  if (mapped.status().code() != StatusCode::kInvalidArgument) return mapped.status();
  // Not a regular file (a pipe): read it, within the same limit as before.
  OP_ASSIGN_OR_RETURN(auto bytes, base::read_file(path, uint64_t(1) << 36));
  return parse_npy(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                   path);
}

Result<HostTensor> read_npy_as(const std::string& path, int32_t want) {
  OP_ASSIGN_OR_RETURN(HostTensor t, read_npy(path));
  if (t.dtype() == want || !holds_bits_of(t.dtype(), want)) return t;
  return HostTensor::borrow(want, t.shape(), t.data(), t.keep_alive());
}

std::string encode_npy(const Tensor& t) {
  const char* descr = "<f4";
  for (const auto& d : kDescrs) {
    if (d.dtype == t.dtype) descr = d.text;
  }
  // numpy has no bfloat16: its bit patterns are written as uint16 (docs/cli.md).
  if (t.dtype == kBfloat16) descr = "<u2";
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape += std::to_string(t.shape[i]) + (t.shape.size() == 1      ? ","
                                           : i + 1 < t.shape.size() ? ", "
                                                                    : "");
  shape += ")";
  std::string header =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  bool v2 = header.size() + 11 > 65535;
  size_t pre = v2 ? 12 : 10;
  size_t total = (pre + header.size() + 1 + 63) / 64 * 64;
  header.append(total - pre - header.size() - 1, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(char(v2 ? 2 : 1));
  out.push_back(0);
  size_t hl = header.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out.push_back(char((hl >> (8 * i)) & 0xff));
  out += header;
  out.append(static_cast<const char*>(t.data), t.nbytes());
  return out;
}

Status write_npy(const std::string& path, const Tensor& t) {
  std::string bytes = encode_npy(t);
  return base::write_file_atomically(
      path, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

}  // namespace onnx_prepack::runtime
