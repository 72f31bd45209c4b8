#include "pack/conv_filter_format.h"

#include <bit>
#include <cstring>
#include <string>

#include "kernels/vec_math/vec_half.h"
#include "pack/function_builder.h"

namespace onnx_prepack::pack {
namespace {

static_assert(std::endian::native == std::endian::little, "packs are little-endian");

constexpr ConvFilterFormat kFormats[] = {
    {"f32_conv_filter_m14", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 14},
    {"f32_conv_filter_m6", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 6},
    {"f32_conv_dw_avx512", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 0},
    {"f32_conv_dw_avx2", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 0},
    {"f32_deconv_filter_m14", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 14, true},
    {"f32_deconv_filter_m6", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 6, true},
    // FLOAT16 sources, widened exactly: the same payloads as the six above.
    {"f32_conv_filter_m14_f16", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 14, false,
     onnx::TensorProto::FLOAT16},
    {"f32_conv_filter_m6_f16", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 6, false,
     onnx::TensorProto::FLOAT16},
    {"f32_conv_dw_avx512_f16", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 0, false,
     onnx::TensorProto::FLOAT16},
    {"f32_conv_dw_avx2_f16", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 0, false,
     onnx::TensorProto::FLOAT16},
    {"f32_deconv_filter_m14_f16", "1", "x86_64-avx512f", device::IsaLevel::kAvx512, 14, true,
     onnx::TensorProto::FLOAT16},
    {"f32_deconv_filter_m6_f16", "1", "x86_64-avx2-fma", device::IsaLevel::kAvx2, 6, true,
     onnx::TensorProto::FLOAT16},
    // aarch64 (NEON): blocks of 8 rows, the rows of f32_gemm_8x12_neon's tile
    // (the filter is the GEMM's A operand); depthwise taps in source order.
    {"f32_conv_filter_m8", "1", "aarch64-neon", device::IsaLevel::kNeon, 8},
    {"f32_conv_dw_neon", "1", "aarch64-neon", device::IsaLevel::kNeon, 0},
    {"f32_deconv_filter_m8", "1", "aarch64-neon", device::IsaLevel::kNeon, 8, true},
    {"f32_conv_filter_m8_f16", "1", "aarch64-neon", device::IsaLevel::kNeon, 8, false,
     onnx::TensorProto::FLOAT16},
    {"f32_conv_dw_neon_f16", "1", "aarch64-neon", device::IsaLevel::kNeon, 0, false,
     onnx::TensorProto::FLOAT16},
    {"f32_deconv_filter_m8_f16", "1", "aarch64-neon", device::IsaLevel::kNeon, 8, true,
     onnx::TensorProto::FLOAT16},
};
// The aarch64 formats last: their level is unordered against the x86-64 ones,
// so a host of either machine only ever accepts its own.
constexpr const ConvFilterFormat* kOrder[] = {
    &kFormats[0],  &kFormats[1],  &kFormats[2],  &kFormats[3],  &kFormats[4],  &kFormats[5],
    &kFormats[6],  &kFormats[7],  &kFormats[8],  &kFormats[9],  &kFormats[10], &kFormats[11],
    &kFormats[12], &kFormats[13], &kFormats[14], &kFormats[15], &kFormats[16], &kFormats[17]};

bool is_f16(int32_t t) { return t == onnx::TensorProto::FLOAT16; }
const char* type_name(int32_t t) { return is_f16(t) ? "FLOAT16" : "FLOAT"; }

onnx::TypeProto leaf(int32_t elem) {
  onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(elem);
  t.mutable_tensor_type()->mutable_shape();
  return t;
}

onnx::TypeProto array_of(onnx::TypeProto element, int dims_index, uint64_t dimension = 0) {
  onnx::TypeProto t;
  auto* arr = t.mutable_struct_type()->mutable_array();
  *arr->mutable_element_type() = std::move(element);
  if (dims_index >= 0) {
    arr->set_dims_index(uint32_t(dims_index));
  } else {
    arr->set_dimension(dimension);
  }
  return t;
}

void add_field(onnx::StructTypeProto::Structure* fields, const std::string& name,
               onnx::TypeProto type, const std::string& doc) {
  auto* f = fields->add_field();
  f->set_name(name);
  *f->mutable_type() = std::move(type);
  f->set_doc_string(doc);
}

void add_meta(onnx::StructTypeProto& t, const std::string& key, const std::string& value) {
  auto* e = t.add_metadata_props();
  e->set_key(key);
  e->set_value(value);
}

using fn::constant_ints;
using fn::ints_attr;
using fn::node;
using fn::typed;

// Blocked leaves: blocks[G, FB, K, mr], tail[G, K, T], shape[rank] -> W.
// Depthwise leaves: taps[M, T], shape[rank] -> W.
onnx::FunctionProto decoder(const ConvFilterFormat& f) {
  onnx::FunctionProto fn;
  fn.set_name("decode_" + std::string(f.name));
  fn.set_domain("onnx_prepack.decoders");
  auto* op = fn.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  const bool f16 = is_f16(f.source_type);
  const std::string w = f16 ? "w_f32" : "w";  // FLOAT16: Cast back to the source type
  if (f.mr == 0) {
    fn.add_input("taps");
    fn.add_input("shape");
    node(fn, "Reshape", {"taps", "shape"}, w);
    typed(fn, "taps", onnx::TensorProto::FLOAT);
  } else {
    fn.add_input("blocks");
    fn.add_input("tail");
    fn.add_input("shape");
    ints_attr(node(fn, "Transpose", {"blocks"}, "blocks_rk"), "perm", {0, 1, 3, 2});
    node(fn, "Shape", {"tail"}, "tail_shape");
    constant_ints(fn, "one", {1});
    auto* gather = node(fn, "Gather", {"tail_shape", "one"}, "k");
    (void)gather;
    constant_ints(fn, "keep_rest", {0, -1});
    auto* cat = node(fn, "Concat", {"keep_rest", "k"}, "rows_shape");
    auto* ax = cat->add_attribute();
    ax->set_name("axis");
    ax->set_type(onnx::AttributeProto::INT);
    ax->set_i(0);
    node(fn, "Reshape", {"blocks_rk", "rows_shape"}, "block_rows");
    ints_attr(node(fn, "Transpose", {"tail"}, "tail_rows"), "perm", {0, 2, 1});
    auto* cat2 = node(fn, "Concat", {"block_rows", "tail_rows"}, "group_rows");
    auto* ax2 = cat2->add_attribute();
    ax2->set_name("axis");
    ax2->set_type(onnx::AttributeProto::INT);
    ax2->set_i(1);
    if (f.transposed) {  // rows [G, Mg * taps, C/group] -> [G, C/group, Mg * taps] -> W
      ints_attr(node(fn, "Transpose", {"group_rows"}, "group_cols"), "perm", {0, 2, 1});
      node(fn, "Reshape", {"group_cols", "shape"}, w);
    } else {
      node(fn, "Reshape", {"group_rows", "shape"}, w);
    }
    typed(fn, "blocks", onnx::TensorProto::FLOAT);
    typed(fn, "tail", onnx::TensorProto::FLOAT);
  }
  if (f16) fn::int_attr(node(fn, "Cast", {w}, "w"), "to", onnx::TensorProto::FLOAT16);
  fn.add_output("w");
  typed(fn, "shape", onnx::TensorProto::INT64);
  typed(fn, "w", f.source_type);
  return fn;
}

std::string dims_string(std::span<const int64_t> d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace

std::span<const ConvFilterFormat* const> conv_filter_formats() { return kOrder; }

const ConvFilterFormat* find_conv_filter_format(std::string_view name) {
  for (const ConvFilterFormat* f : kOrder) {
    if (f->name == name) return f;
  }
  return nullptr;
}

size_t ConvFilterSource::m() const {
  if (!transposed) return size_t(dims[0]);
  size_t m = size_t(group);
  for (size_t i = 1; i < dims.size(); ++i) m *= size_t(dims[i]);
  return m;
}

size_t ConvFilterSource::k() const {
  if (transposed) return size_t(dims[0] / group);
  size_t k = 1;
  for (size_t i = 1; i < dims.size(); ++i) k *= size_t(dims[i]);
  return k;
}

Result<ConvFilterSource> conv_filter_source(std::span<const uint8_t> bytes, int32_t type,
                                            std::span<const int64_t> dims, int64_t group,
                                            bool transposed) {
  if (type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::FLOAT16) {
    return invalid_argument("conv filter source: element type " + std::to_string(type) +
                            " is not FLOAT or FLOAT16");
  }
  if (dims.size() < 3 || dims.size() > 5) {
    return invalid_argument("conv filter source: rank " + std::to_string(dims.size()) +
                            " is not 3, 4 or 5");
  }
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d <= 0 || uint64_t(d) > (uint64_t(1) << 32)) {
      return invalid_argument("conv filter source: dims " + dims_string(dims) +
                              " must be positive");
    }
    count *= uint64_t(d);
    if (count > (uint64_t(1) << 40)) return invalid_argument("conv filter source: too large");
  }
  if (group <= 0 || dims[0] % group != 0) {
    return invalid_argument("conv filter source: group " + std::to_string(group) +
                            " does not divide " + std::to_string(dims[0]) +
                            (transposed ? " input channels" : " output channels"));
  }
  const uint64_t esize = is_f16(type) ? 2 : 4;
  if (bytes.size() != count * esize) {
    return invalid_argument("conv filter source: " + std::to_string(bytes.size()) +
                            " bytes for dims " + dims_string(dims) + " of " + type_name(type) +
                            ", expected " + std::to_string(count * esize));
  }
  ConvFilterSource s;
  s.bytes = bytes;
  s.type = type;
  s.dims.assign(dims.begin(), dims.end());
  s.group = group;
  s.transposed = transposed;
  return s;
}

bool conv_filter_is_depthwise(std::span<const int64_t> dims, int64_t group) {
  return dims.size() >= 3 && dims.size() <= 4 && dims[1] == 1 && dims[0] == group;
}

std::vector<const ConvFilterFormat*> conv_filter_formats_for(std::span<const int64_t> dims,
                                                             int64_t group, device::IsaLevel level,
                                                             bool transposed, int32_t source_type) {
  const bool dw = !transposed && conv_filter_is_depthwise(dims, group);
  std::vector<const ConvFilterFormat*> out;
  for (const ConvFilterFormat* f : kOrder) {
    if (f->transposed == transposed && (f->mr == 0) == dw && f->isa <= level &&
        f->source_type == source_type)
      out.push_back(f);
  }
  return out;
}

const ConvFilterFormat* conv_filter_format_for_rows(std::span<const int64_t> dims, int64_t group,
                                                    size_t mr, device::IsaLevel level,
                                                    bool transposed, int32_t source_type) {
  const bool dw = !transposed && conv_filter_is_depthwise(dims, group);
  if (dw != (mr == 0)) return nullptr;
  const ConvFilterFormat* fallback = nullptr;
  for (const ConvFilterFormat* f : kOrder) {
    if (f->mr != mr || f->transposed != transposed || f->source_type != source_type) continue;
    if (f->isa <= level) return f;
    if (fallback == nullptr || f->isa < fallback->isa) fallback = f;
  }
  return fallback;  // a host below every format: the least demanding one's layout
}

std::vector<uint64_t> conv_filter_dims(const ConvFilterFormat& f, const ConvFilterSource& s) {
  const uint64_t rank = s.dims.size();
  if (f.mr == 0) return {s.m(), s.k(), rank};
  const uint64_t mg = s.m() / uint64_t(s.group);
  return {uint64_t(s.group), mg / f.mr, s.k(), mg % f.mr, rank};
}

uint64_t conv_filter_payload_bytes(const ConvFilterFormat&, const ConvFilterSource& s) {
  return uint64_t(s.m()) * s.k() * 4 + s.dims.size() * 8;
}

onnx::StructTypeProto conv_filter_struct_type(const ConvFilterFormat& f) {
  onnx::StructTypeProto t;
  t.set_name(std::string(f.name));
  add_meta(t, "format_version", std::string(f.version));
  add_meta(t, "source_type", type_name(f.source_type));
  add_meta(t, "architecture", std::string(f.architecture));
  auto* fields = t.mutable_structure();
  if (f.mr == 0) {
    t.set_doc_string(
        "f32 depthwise Conv filter: taps [channels][taps] in source order, then the filter "
        "shape.");
    for (const char* p : {"channels", "taps", "rank"}) t.add_dims_param(p);
    add_field(fields, "taps", array_of(array_of(leaf(onnx::TensorProto::FLOAT), 1), 0),
              "[channels][taps] f32");
    add_field(fields, "shape", array_of(leaf(onnx::TensorProto::INT64), 2),
              "the filter's dims [M, 1, k...]");
  } else {
    const std::string mr = std::to_string(f.mr);
    add_meta(t, "block_rows", mr);
    if (f.transposed) {
      t.set_doc_string(
          "f32 ConvTranspose filter W [C, M/group, k...] as the GEMM operand A_g[r][c] = "
          "W[g * C/group + c][r] (r over M/group * prod(kernel)), in blocks of " +
          mr + " rows per group: each block k = C/group rows of " + mr +
          " values, then the group's last tail_rows rows the same way; then the filter shape.");
    } else {
      t.set_doc_string("f32 Conv filter in blocks of " + mr +
                       " output channels per group: each block k rows of " + mr +
                       " values (k = C/group * prod(kernel)), then the group's last tail_rows "
                       "channels the same way; then the filter shape.");
    }
    for (const char* p : {"groups", "full_blocks", "k", "tail_rows", "rank"}) t.add_dims_param(p);
    onnx::TypeProto group;
    auto* gf = group.mutable_struct_type()->mutable_structure();
    add_field(gf, "blocks",
              array_of(array_of(array_of(leaf(onnx::TensorProto::FLOAT), -1, f.mr), 2), 1),
              "[full_blocks][k][" + mr + "] f32");
    add_field(gf, "tail", array_of(array_of(leaf(onnx::TensorProto::FLOAT), 3), 2),
              "[k][tail_rows] f32");
    add_field(fields, "groups", array_of(std::move(group), 0), "one entry per group");
    add_field(fields, "shape", array_of(leaf(onnx::TensorProto::INT64), 4),
              f.transposed ? "the filter's dims [C, M/group, k...]"
                           : "the filter's dims [M, C/group, k...]");
  }
  if (is_f16(f.source_type))
    t.set_doc_string(t.doc_string() + " The source is FLOAT16, widened exactly to f32.");
  *t.mutable_decoder() = decoder(f);
  return t;
}

Status conv_filter_pack(const ConvFilterFormat& f, const ConvFilterSource& s,
                        std::span<uint8_t> out) {
  const uint64_t need = conv_filter_payload_bytes(f, s);
  if (out.size() != need) {
    return invalid_argument("pack '" + std::string(f.name) + "': output is " +
                            std::to_string(out.size()) + " bytes, needs " + std::to_string(need));
  }
  if (reinterpret_cast<uintptr_t>(out.data()) % 4 != 0 ||
      reinterpret_cast<uintptr_t>(s.bytes.data()) % (is_f16(s.type) ? 2 : 4) != 0) {
    return invalid_argument("pack '" + std::string(f.name) + "': misaligned buffer");
  }
  if (s.type != f.source_type) {
    return invalid_argument("pack '" + std::string(f.name) + "': source is " + type_name(s.type) +
                            ", format needs " + type_name(f.source_type));
  }
  if (f.transposed != s.transposed) {
    return invalid_argument(
        "pack '" + std::string(f.name) + "': filter " + dims_string(s.dims) +
        (f.transposed ? " is not a ConvTranspose filter" : " is a ConvTranspose filter"));
  }
  if (!f.transposed && (f.mr == 0) != conv_filter_is_depthwise(s.dims, s.group)) {
    return invalid_argument("pack '" + std::string(f.name) + "': filter " + dims_string(s.dims) +
                            " with group " + std::to_string(s.group) +
                            (f.mr == 0 ? " is not depthwise" : " is depthwise"));
  }
  float* dst = reinterpret_cast<float*>(out.data());
  const size_t K = s.k(), M = s.m();
  // A FLOAT16 source is widened exactly (the runtime's half conversion) and
  // packed as the float filter holding those values.
  std::vector<float> widened;
  if (is_f16(s.type)) {
    widened.resize(M * K);
    kernels::vec::host_half_convert().f16_to_f32(reinterpret_cast<const uint16_t*>(s.bytes.data()),
                                                 widened.data(), M * K);
  }
  const float* w = is_f16(s.type) ? widened.data() : reinterpret_cast<const float*>(s.bytes.data());
  if (f.mr == 0) {
    std::memcpy(dst, w, M * K * 4);
  } else if (f.transposed) {
    // Row r of group g's operand is column r of W's rows g * K .. g * K + K - 1.
    const size_t mg = M / size_t(s.group), mr = f.mr;
    for (size_t g = 0; g < size_t(s.group); ++g) {
      const float* wg = w + g * K * mg;
      for (size_t m0 = 0; m0 < mg; m0 += mr) {
        const size_t rows = std::min(mr, mg - m0);
        float* blk = dst + (g * mg + m0) * K;
        for (size_t k = 0; k < K; ++k) {
          for (size_t i = 0; i < rows; ++i) blk[k * rows + i] = wg[k * mg + m0 + i];
        }
      }
    }
  } else {
    const size_t mg = M / size_t(s.group), mr = f.mr;
    for (size_t g = 0; g < size_t(s.group); ++g) {
      for (size_t m0 = 0; m0 < mg; m0 += mr) {
        const size_t rows = std::min(mr, mg - m0);
        float* blk = dst + (g * mg + m0) * K;
        const float* src = w + (g * mg + m0) * K;
        for (size_t k = 0; k < K; ++k) {
          for (size_t i = 0; i < rows; ++i) blk[k * rows + i] = src[i * K + k];
        }
      }
    }
  }
  std::memcpy(out.data() + M * K * 4, s.dims.data(), s.dims.size() * 8);
  return ok_status();
}

Status conv_filter_check_entry(const ConvFilterFormat& f, const onnx::StructTypeProto& type,
                               std::span<const uint64_t> got, int32_t source_type,
                               std::span<const int64_t> source_dims, int64_t group) {
  std::string version;
  for (const auto& e : type.metadata_props()) {
    if (e.key() == "format_version") version = e.value();
  }
  if (type.name() != f.name || version != f.version) {
    return invalid_argument("format '" + type.name() + "' version '" + version + "' is not '" +
                            std::string(f.name) + "' version '" + std::string(f.version) + "'");
  }
  std::vector<int64_t> sd(source_dims.begin(), source_dims.end());
  uint64_t count = 1;
  for (int64_t d : sd) count *= uint64_t(std::max<int64_t>(d, 0));
  ConvFilterSource s;
  s.dims = sd;
  s.group = group;
  s.transposed = f.transposed;
  if (source_type != f.source_type || sd.size() < 3 || sd.size() > 5 || count == 0 || group <= 0 ||
      sd[0] % group != 0) {
    return invalid_argument("format '" + std::string(f.name) + "' does not fit source " +
                            dims_string(sd));
  }
  const auto want = conv_filter_dims(f, s);
  if (got.size() != want.size() || !std::equal(want.begin(), want.end(), got.begin())) {
    return invalid_argument("format '" + std::string(f.name) + "' dims do not fit the source " +
                            dims_string(sd) + " with group " + std::to_string(group));
  }
  return ok_status();
}

}  // namespace onnx_prepack::pack
