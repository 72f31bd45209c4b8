// The shared machinery of the f32 GEMM B panel formats: layout description,
// decoder, entry checks and packing. The per-width files only list formats.
#include <bit>
#include <string>

#include "kernels/f32_gemm/gemm_driver.h"
#include "pack/function_builder.h"
#include "pack/gemm_b_format.h"

namespace onnx_prepack::pack {
namespace {

static_assert(std::endian::native == std::endian::little, "packs are little-endian");

using kernels::PackSourceLayout;

const char* layout_name(PackSourceLayout l) { return l == PackSourceLayout::kKN ? "kn" : "nk"; }
const char* type_name(int32_t t) { return t == onnx::TensorProto::FLOAT16 ? "FLOAT16" : "FLOAT"; }
size_t element_size(int32_t t) { return t == onnx::TensorProto::FLOAT16 ? 2 : 4; }

onnx::TypeProto float_leaf() {
  onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  t.mutable_tensor_type()->mutable_shape();  // rank 0
  return t;
}

// An inline array type; count from the root's dims_param when dims_index >= 0.
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

void add_meta(google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>* props,
              const std::string& key, const std::string& value) {
  auto* e = props->Add();
  e->set_key(key);
  e->set_value(value);
}

using fn::typed;

// Leaves: panels[full_panels, k, nr], tail_values[k, tail_cols],
// tail_padding[k, tail_pad]. Output: the source tensor.
onnx::FunctionProto decoder(const GemmBFormat& f) {
  onnx::FunctionProto fn;
  fn.set_name("decode_" + std::string(f.name));
  fn.set_domain("onnx_prepack.decoders");
  fn.add_input("panels");
  fn.add_input("tail_values");
  fn.add_input("tail_padding");
  fn.add_output("b");
  auto* op = fn.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  const bool nk = f.layout == PackSourceLayout::kNK;
  const bool f16 = f.source_type == onnx::TensorProto::FLOAT16;
  fn::ints_attr(fn::node(fn, "Transpose", {"panels"}, "panels_kpn"), "perm", {1, 0, 2});
  fn::int_attr(fn::node(fn, "Flatten", {"panels_kpn"}, "panels_kn"), "axis", 1);
  std::string cur = (nk || f16) ? "b_kn" : "b";
  fn::int_attr(fn::node(fn, "Concat", {"panels_kn", "tail_values"}, cur), "axis", 1);
  if (nk) {
    const std::string next = f16 ? "b_nk" : "b";
    fn::ints_attr(fn::node(fn, "Transpose", {cur}, next), "perm", {1, 0});
    cur = next;
  }
  if (f16) fn::int_attr(fn::node(fn, "Cast", {cur}, "b"), "to", onnx::TensorProto::FLOAT16);
  typed(fn, "panels", onnx::TensorProto::FLOAT);
  typed(fn, "tail_values", onnx::TensorProto::FLOAT);
  typed(fn, "tail_padding", onnx::TensorProto::FLOAT);
  typed(fn, "b", f.source_type);
  return fn;
}

std::string dims_string(std::span<const uint64_t> d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace

Result<GemmBSource> gemm_b_source(std::span<const uint8_t> bytes, int32_t type,
                                  std::span<const int64_t> dims, PackSourceLayout layout) {
  if (type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::FLOAT16) {
    return invalid_argument("gemm b source: element type " + std::to_string(type) +
                            " is not FLOAT or FLOAT16");
  }
  if (dims.size() != 2 || dims[0] <= 0 || dims[1] <= 0) {
    return invalid_argument("gemm b source: needs 2 positive dims, got rank " +
                            std::to_string(dims.size()));
  }
  const uint64_t count = uint64_t(dims[0]) * uint64_t(dims[1]);
  if (uint64_t(dims[0]) > (uint64_t(1) << 40) || uint64_t(dims[1]) > (uint64_t(1) << 40) ||
      count > (uint64_t(1) << 40) || bytes.size() != count * element_size(type)) {
    return invalid_argument("gemm b source: " + std::to_string(bytes.size()) + " bytes for dims [" +
                            std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + "] of " +
                            type_name(type) + ", expected " +
                            std::to_string(count * element_size(type)));
  }
  GemmBSource s;
  s.bytes = bytes;
  s.type = type;
  s.layout = layout;
  s.k = size_t(layout == PackSourceLayout::kKN ? dims[0] : dims[1]);
  s.n = size_t(layout == PackSourceLayout::kKN ? dims[1] : dims[0]);
  return s;
}

std::vector<uint64_t> gemm_b_dims(const GemmBFormat& f, size_t k, size_t n) {
  const uint64_t tail = n % f.nr;
  return {n / f.nr, k, tail, tail ? f.nr - tail : 0};
}

uint64_t gemm_b_payload_bytes(const GemmBFormat& f, size_t k, size_t n) {
  return uint64_t(kernels::packed_b_floats(k, n, f.nr)) * 4;
}

onnx::StructTypeProto gemm_b_struct_type(const GemmBFormat& f) {
  onnx::StructTypeProto t;
  t.set_name(std::string(f.name));
  t.set_doc_string("f32 GEMM B in panels of " + std::to_string(f.nr) +
                   " columns (k rows each, row-major) from a " + type_name(f.source_type) + " " +
                   (f.layout == PackSourceLayout::kKN ? "[k, n]" : "[n, k]") +
                   " source; the last panel's columns past n are zero (tail.padding).");
  add_meta(t.mutable_metadata_props(), "format_version", std::string(f.version));
  add_meta(t.mutable_metadata_props(), "source_layout", layout_name(f.layout));
  add_meta(t.mutable_metadata_props(), "source_type", type_name(f.source_type));
  add_meta(t.mutable_metadata_props(), "panel_width", std::to_string(f.nr));
  add_meta(t.mutable_metadata_props(), "architecture", std::string(f.architecture));
  for (const char* p : {"full_panels", "k", "tail_cols", "tail_pad"}) t.add_dims_param(p);
  auto* fields = t.mutable_structure();
  auto* panels = fields->add_field();
  panels->set_name("panels");
  *panels->mutable_type() = array_of(array_of(array_of(float_leaf(), -1, f.nr), 1), 0);
  panels->set_doc_string("full panels: [full_panels][k][" + std::to_string(f.nr) + "] f32");
  onnx::TypeProto row;
  auto* row_fields = row.mutable_struct_type()->mutable_structure();
  auto* values = row_fields->add_field();
  values->set_name("values");
  *values->mutable_type() = array_of(float_leaf(), 2);
  auto* padding = row_fields->add_field();
  padding->set_name("padding");
  *padding->mutable_type() = array_of(float_leaf(), 3);
  padding->set_doc_string("zero");
  auto* tail = fields->add_field();
  tail->set_name("tail");
  *tail->mutable_type() = array_of(std::move(row), 1);
  tail->set_doc_string("last partial panel, k rows of tail_cols values then tail_pad zeros");
  *t.mutable_decoder() = decoder(f);
  return t;
}

Status gemm_b_check_entry(const GemmBFormat& f, const onnx::StructTypeProto& type,
                          std::span<const uint64_t> dims, int32_t source_type,
                          std::span<const int64_t> source_dims) {
  if (type.name() != f.name) {
    return invalid_argument("format '" + type.name() + "' is not '" + std::string(f.name) + "'");
  }
  std::string version;
  for (const auto& e : type.metadata_props()) {
    if (e.key() == "format_version") version = e.value();
  }
  if (version != f.version) {
    return invalid_argument("format '" + std::string(f.name) + "' version '" + version +
                            "', this build reads '" + std::string(f.version) + "'");
  }
  if (source_type != f.source_type) {
    return invalid_argument("format '" + std::string(f.name) + "' packs " +
                            type_name(f.source_type) + ", source is " + type_name(source_type));
  }
  if (source_dims.size() != 2 || source_dims[0] <= 0 || source_dims[1] <= 0) {
    return invalid_argument("format '" + std::string(f.name) + "' needs a 2-d source");
  }
  const bool kn = f.layout == PackSourceLayout::kKN;
  const size_t k = size_t(kn ? source_dims[0] : source_dims[1]);
  const size_t n = size_t(kn ? source_dims[1] : source_dims[0]);
  const std::vector<uint64_t> want = gemm_b_dims(f, k, n);
  if (dims.size() != want.size() || !std::equal(want.begin(), want.end(), dims.begin())) {
    return invalid_argument("format '" + std::string(f.name) + "' dims " + dims_string(dims) +
                            " do not fit the source, expected " + dims_string(want));
  }
  return ok_status();
}

Status gemm_b_pack(const GemmBFormat& f, const GemmBSource& src, std::span<uint8_t> out,
                   base::ThreadPool* pool) {
  if (src.type != f.source_type || src.layout != f.layout) {
    return invalid_argument("pack '" + std::string(f.name) + "': source is " + type_name(src.type) +
                            " " + layout_name(src.layout) + ", format needs " +
                            type_name(f.source_type) + " " + layout_name(f.layout));
  }
  if (src.k == 0 || src.n == 0 || src.bytes.size() != src.k * src.n * element_size(src.type)) {
    return invalid_argument("pack '" + std::string(f.name) + "': source has " +
                            std::to_string(src.bytes.size()) + " bytes for k " +
                            std::to_string(src.k) + " x n " + std::to_string(src.n));
  }
  const uint64_t need = gemm_b_payload_bytes(f, src.k, src.n);
  if (out.size() != need) {
    return invalid_argument("pack '" + std::string(f.name) + "': output is " +
                            std::to_string(out.size()) + " bytes, needs " + std::to_string(need));
  }
  if (reinterpret_cast<uintptr_t>(out.data()) % alignof(float) != 0 ||
      reinterpret_cast<uintptr_t>(src.bytes.data()) % element_size(src.type) != 0) {
    return invalid_argument("pack '" + std::string(f.name) + "': misaligned buffer");
  }
  kernels::F32PackBArgs args{src.bytes.data(),
                             f.layout,
                             f.source_type == onnx::TensorProto::FLOAT16
                                 ? kernels::PackSourceType::kFloat16
                                 : kernels::PackSourceType::kFloat,
                             src.k,
                             src.n,
                             f.nr,
                             reinterpret_cast<float*>(out.data())};
  return kernels::f32_pack_b(args, pool);
}

}  // namespace onnx_prepack::pack
