// 8-bit integer GEMM B formats: struct types, decoders, entry checks and the
// pack (kernels/i8_gemm/i8_pack_b.cc). docs/formats.md, "Integer GEMM B".
#include "pack/i8_gemm_b_format.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "pack/function_builder.h"
#include "types/struct_type.h"

namespace onnx_prepack::pack {
namespace {

static_assert(std::endian::native == std::endian::little, "packs are little-endian");

void add_meta(onnx::StructTypeProto& t, const std::string& key, const std::string& value) {
  auto* e = t.add_metadata_props();
  e->set_key(key);
  e->set_value(value);
}

onnx::TypeProto leaf(int32_t elem) {
  onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(elem);
  t.mutable_tensor_type()->mutable_shape();
  return t;
}

// An array of `element` counted by dims_param `dims_index`, or of fixed
// `dimension` elements when dims_index < 0.
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

const char* type_word(int32_t t) { return t == onnx::TensorProto::INT8 ? "INT8" : "UINT8"; }

// One panel: k_groups (counted by dims_param `k_groups_index`) groups of 16 columns x 4 k codes,
// then 16 int32 column sums.
onnx::TypeProto panel_type(bool is_signed, int k_groups_index) {
  onnx::TypeProto panel;
  auto* pf = panel.mutable_struct_type()->mutable_structure();
  auto* codes = pf->add_field();
  codes->set_name("codes");
  // [k_groups][16 columns][4 k]
  *codes->mutable_type() =
      array_of(array_of(array_of(leaf(onnx::TensorProto::INT8), -1, 4), -1, 16), k_groups_index);
  codes->set_doc_string(is_signed ? "B[4g + r][16p + j]" : "B[4g + r][16p + j] - 128");
  auto* sums = pf->add_field();
  sums->set_name("column_sums");
  *sums->mutable_type() = array_of(leaf(onnx::TensorProto::INT32), -1, 16);
  sums->set_doc_string("sum over k of the column's stored codes");
  return panel;
}

// Leaves panels_codes INT8 [panels, k_groups, 16, 4] and panels_column_sums
// INT32 [panels, 16] -> b [4 k_groups, 16 panels] of the source type: B with
// its padding (rows past K, columns past N: 0 for int8 B, 128 for uint8 B).
// The column sums are derived from the codes and not read.
onnx::FunctionProto i8_gemm_b_decoder(const I8GemmBFormat& f) {
  using fn::node;
  const bool is_signed = f.source_type == onnx::TensorProto::INT8;
  onnx::FunctionProto d;
  d.set_name("decode_" + std::string(f.name));
  d.set_domain("onnx_prepack.decoders");
  auto* op = d.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  d.add_input("panels_codes");
  d.add_input("panels_column_sums");
  // codes[p][g][j][r] is B[4g + r][16p + j]: to [g, r, p, j], then rows k, columns n.
  fn::ints_attr(node(d, "Transpose", {"panels_codes"}, "k_major"), "perm", {1, 3, 0, 2});
  node(d, "Shape", {"panels_codes"}, "shape");
  fn::constant_ints(d, "zero", {0});
  fn::constant_ints(d, "one", {1});
  node(d, "Slice", {"shape", "zero", "one"}, "panels");
  fn::constant_ints(d, "sixteen", {16});
  node(d, "Mul", {"panels", "sixteen"}, "columns");
  fn::constant_ints(d, "minus_one", {-1});
  fn::int_attr(node(d, "Concat", {"minus_one", "columns"}, "b_shape"), "axis", 0);
  if (is_signed) {
    node(d, "Reshape", {"k_major", "b_shape"}, "b");
  } else {  // stored b - 128
    node(d, "Reshape", {"k_major", "b_shape"}, "stored");
    fn::int_attr(node(d, "Cast", {"stored"}, "wide"), "to", onnx::TensorProto::INT64);
    fn::constant_ints(d, "shift", {128});
    node(d, "Add", {"wide", "shift"}, "unshifted");
    fn::int_attr(node(d, "Cast", {"unshifted"}, "b"), "to", onnx::TensorProto::UINT8);
  }
  d.add_output("b");
  fn::typed(d, "panels_codes", onnx::TensorProto::INT8);
  fn::typed(d, "panels_column_sums", onnx::TensorProto::INT32);
  fn::typed(d, "b", f.source_type);
  return d;
}

// Leaves panels_codes INT8 [panels, k_groups, 16, 4], panels_column_sums and
// shape INT64 [rank] -> W of the source type: codes[p][g][j][r] is W[16p + j]
// flattened at 4g + r, so [p, j, g, r] is W [M, K] with its padding, sliced to
// [M, K] and reshaped to W's dims. The column sums are not read.
// Grouped (f.grouped): the leaves groups_panels_codes [groups, panels, k_groups, 16, 4] and
// groups_panels_column_sums; group g's codes are the rows g * M/groups + 16p + j, so
// [g, p, j, kg, r] is [groups, M/groups, K] padded, sliced to [groups, M/groups, K] and
// reshaped to W's dims ([groups, M/groups] is W's [M] row-major).
onnx::FunctionProto i8_conv_w_decoder(const I8GemmBFormat& f) {
  using fn::node;
  const bool is_signed = f.source_type == onnx::TensorProto::INT8;
  const bool g = f.grouped;
  const std::string codes = g ? "groups_panels_codes" : "panels_codes";
  const std::string sums = g ? "groups_panels_column_sums" : "panels_column_sums";
  onnx::FunctionProto d;
  d.set_name("decode_" + std::string(f.name));
  d.set_domain("onnx_prepack.decoders");
  auto* op = d.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  d.add_input(codes);
  d.add_input(sums);
  d.add_input("shape");
  fn::ints_attr(node(d, "Transpose", {codes}, "n_major"), "perm",
                g ? std::vector<int64_t>{0, 1, 3, 2, 4} : std::vector<int64_t>{0, 2, 1, 3});
  node(d, "Shape", {codes}, "codes_shape");
  fn::constant_ints(d, "zero", {0});
  fn::constant_ints(d, "one", {1});
  fn::constant_ints(d, "two", {2});
  fn::constant_ints(d, "max", {int64_t(1) << 62});
  if (g) {
    fn::constant_ints(d, "three", {3});
    node(d, "Slice", {"codes_shape", "zero", "one"}, "groups");
    node(d, "Slice", {"codes_shape", "one", "two"}, "panels");
    node(d, "Slice", {"codes_shape", "two", "three"}, "k_groups");
  } else {
    node(d, "Slice", {"codes_shape", "zero", "one"}, "panels");
    node(d, "Slice", {"codes_shape", "one", "two"}, "k_groups");
  }
  fn::constant_ints(d, "sixteen", {16});
  fn::constant_ints(d, "four", {4});
  node(d, "Mul", {"panels", "sixteen"}, "rows");
  node(d, "Mul", {"k_groups", "four"}, "cols");
  fn::int_attr(node(d, "Concat",
                    g ? std::vector<std::string>{"groups", "rows", "cols"}
                      : std::vector<std::string>{"rows", "cols"},
                    "padded_shape"),
               "axis", 0);
  node(d, "Reshape", {"n_major", "padded_shape"}, "padded");
  // M (per group: shape[0] / groups) and K = prod(shape[1..]).
  node(d, "Slice", {"shape", "zero", "one"}, "m");
  node(d, "Slice", {"shape", "one", "max"}, "rest");
  auto* prod = node(d, "ReduceProd", {"rest"}, "k");
  fn::int_attr(prod, "keepdims", 1);
  if (g) {
    node(d, "Div", {"m", "groups"}, "mg");
    fn::int_attr(node(d, "Concat", {"groups", "mg", "k"}, "ends"), "axis", 0);
    fn::constant_ints(d, "starts", {0, 0, 0});
  } else {
    fn::int_attr(node(d, "Concat", {"m", "k"}, "ends"), "axis", 0);
    fn::constant_ints(d, "starts", {0, 0});
  }
  const std::string w = is_signed ? "w" : "stored";
  node(d, "Slice", {"padded", "starts", "ends"}, "rows_k");
  node(d, "Reshape", {"rows_k", "shape"}, w);
  if (!is_signed) {  // stored w - 128
    fn::int_attr(node(d, "Cast", {"stored"}, "wide"), "to", onnx::TensorProto::INT64);
    fn::constant_ints(d, "shift", {128});
    node(d, "Add", {"wide", "shift"}, "unshifted");
    fn::int_attr(node(d, "Cast", {"unshifted"}, "w"), "to", onnx::TensorProto::UINT8);
  }
  d.add_output("w");
  fn::typed(d, codes, onnx::TensorProto::INT8);
  fn::typed(d, sums, onnx::TensorProto::INT32);
  fn::typed(d, "shape", onnx::TensorProto::INT64);
  fn::typed(d, "w", f.source_type);
  return d;
}

}  // namespace

const I8GemmBFormat kI8GemmBPanel16 = {"i8_gemm_b_panel16", "1", "x86_64", onnx::TensorProto::INT8};
const I8GemmBFormat kU8GemmBPanel16 = {"u8_gemm_b_panel16", "1", "x86_64",
                                       onnx::TensorProto::UINT8};
const I8GemmBFormat kI8GemmBPanel16Dotprod = {
    "i8_gemm_b_panel16_dotprod", "1",   "aarch64-dotprod",
    onnx::TensorProto::INT8,     false, device::IsaLevel::kDotprod};
const I8GemmBFormat kU8GemmBPanel16Dotprod = {
    "u8_gemm_b_panel16_dotprod", "1",   "aarch64-dotprod",
    onnx::TensorProto::UINT8,    false, device::IsaLevel::kDotprod};

std::span<const I8GemmBFormat* const> i8_gemm_b_formats() {
  static const I8GemmBFormat* const kAll[] = {&kI8GemmBPanel16, &kU8GemmBPanel16,
                                              &kI8GemmBPanel16Dotprod, &kU8GemmBPanel16Dotprod};
  return kAll;
}

const I8GemmBFormat* i8_gemm_b_format(int32_t source_type) {
  for (const I8GemmBFormat* f : i8_gemm_b_formats()) {
    if (f->source_type == source_type && f->isa == device::IsaLevel::kRef) return f;
  }
  return nullptr;
}

const I8GemmBFormat* i8_aarch64_twin(const I8GemmBFormat& f) {
  if (f.isa != device::IsaLevel::kRef) return nullptr;
  const bool conv = find_i8_conv_w_format(f.name) != nullptr;
  for (const I8GemmBFormat* t : conv ? i8_conv_w_formats() : i8_gemm_b_formats()) {
    if (t->isa == device::IsaLevel::kDotprod && t->source_type == f.source_type &&
        t->grouped == f.grouped) {
      return t;
    }
  }
  return nullptr;
}

const I8GemmBFormat* find_i8_gemm_b_format(std::string_view name) {
  for (const I8GemmBFormat* f : i8_gemm_b_formats()) {
    if (f->name == name) return f;
  }
  return nullptr;
}

Result<kernels::I8GemmShape> i8_gemm_b_shape(int32_t source_type, std::span<const int64_t> dims) {
  if (i8_gemm_b_format(source_type) == nullptr) {
    return invalid_argument("B must be int8 or uint8");
  }
  if (dims.size() != 2) return invalid_argument("B must be 2-D");
  // Bounded so that packed_bytes() cannot overflow (the largest model holds far less).
  constexpr int64_t kMax = int64_t(1) << 40;
  if (dims[0] < 0 || dims[1] < 0 || dims[0] > kMax || dims[1] > kMax ||
      (dims[0] + 3) / 4 * ((dims[1] + 15) / 16) > (int64_t(1) << 48)) {
    return invalid_argument("B's dims are out of range");
  }
  if (dims[0] == 0 || dims[1] == 0) return invalid_argument("empty weight: nothing to pack");
  kernels::I8GemmShape s;
  s.K = dims[0];
  s.N = dims[1];
  s.b_signed = source_type == onnx::TensorProto::INT8;
  return s;
}

std::vector<uint64_t> i8_gemm_b_dims(const kernels::I8GemmShape& s) {
  return {uint64_t(s.panels()), uint64_t(s.k_groups())};
}

uint64_t i8_gemm_b_payload_bytes(const kernels::I8GemmShape& s) { return s.packed_bytes(); }

onnx::StructTypeProto i8_gemm_b_struct_type(const I8GemmBFormat& f) {
  const bool is_signed = f.source_type == onnx::TensorProto::INT8;
  onnx::StructTypeProto t;
  t.set_name(std::string(f.name));
  t.set_doc_string(
      std::string("MatMulInteger ") + type_word(f.source_type) +
      " B [K, N] in panels of 16 columns: per panel, k_groups = ceil(K / 4) groups of 16 "
      "columns x 4 k (byte 4j + r of group g: column 16p + j, k = 4g + r) as int8 " +
      (is_signed ? "B" : "B - 128") +
      ", then 16 int32 column sums of those int8 values. Rows past K and columns past N are 0. "
      "Bound to B alone: zero points are applied at run time (no lineage).");
  add_meta(t, "format_version", std::string(f.version));
  add_meta(t, "source_type", type_word(f.source_type));
  add_meta(t, "stored", is_signed ? "b" : "b - 128");
  add_meta(t, "panel_width", "16");
  add_meta(t, "k_group", "4");
  // No lineage: the checker admits no lineage./attr. key on these entries.
  add_meta(t, "lineage_roles", "");
  add_meta(t, "lineage_attrs", "");
  for (const char* p : {"panels", "k_groups"}) t.add_dims_param(p);
  auto* panels = t.mutable_structure()->add_field();
  panels->set_name("panels");
  *panels->mutable_type() = array_of(panel_type(is_signed, 1), 0);
  *t.mutable_decoder() = i8_gemm_b_decoder(f);
  return t;
}

Status i8_gemm_b_check_entry(const I8GemmBFormat& f, const onnx::StructTypeProto& type,
                             std::span<const uint64_t> dims, int32_t source_type,
                             std::span<const int64_t> source_dims) {
  if (type.name() != f.name) {
    return invalid_argument("format '" + type.name() + "' is not '" + std::string(f.name) + "'");
  }
  std::string version, stored_type;
  for (const auto& e : type.metadata_props()) {
    if (e.key() == "format_version") version = e.value();
    if (e.key() == "source_type") stored_type = e.value();
  }
  if (version != f.version) {
    return invalid_argument("format '" + std::string(f.name) + "' version '" + version +
                            "', this build reads '" + std::string(f.version) + "'");
  }
  if (source_type != f.source_type || stored_type != type_word(f.source_type)) {
    return invalid_argument("format '" + std::string(f.name) + "' holds " +
                            type_word(f.source_type) + " B, this B is " +
                            (i8_gemm_b_format(source_type) ? type_word(source_type) : "neither"));
  }
  OP_ASSIGN_OR_RETURN(kernels::I8GemmShape s, i8_gemm_b_shape(source_type, source_dims));
  const auto want = i8_gemm_b_dims(s);
  if (dims.size() != want.size() || !std::equal(want.begin(), want.end(), dims.begin())) {
    return invalid_argument("format '" + std::string(f.name) + "' dims do not fit B's K and N");
  }
  // The type must describe exactly the bytes the kernels read for these dims.
  const google::protobuf::RepeatedPtrField<onnx::StructTypeProto> none;
  auto bits = types::struct_type_bits(none, type, dims);
  if (!bits.ok() || *bits != i8_gemm_b_payload_bytes(s) * 8) {
    return invalid_argument("format '" + std::string(f.name) +
                            "': the entry's type does not describe the packed panels of B");
  }
  return ok_status();
}

Status i8_gemm_b_pack(const kernels::I8GemmShape& s, std::span<const uint8_t> b,
                      std::span<uint8_t> out) {
  if (b.size() != uint64_t(s.K) * uint64_t(s.N)) {
    return invalid_argument("B holds " + std::to_string(b.size()) + " bytes, [" +
                            std::to_string(s.K) + ", " + std::to_string(s.N) + "] needs " +
                            std::to_string(uint64_t(s.K) * uint64_t(s.N)));
  }
  if (out.size() != i8_gemm_b_payload_bytes(s)) {
    return invalid_argument("pack output size differs from the format's");
  }
  kernels::i8_pack_b(s, b.data(), size_t(s.N), out.data());
  return ok_status();
}

const I8GemmBFormat kI8ConvWPanel16 = {"i8_conv_w_panel16", "1", "x86_64", onnx::TensorProto::INT8};
const I8GemmBFormat kU8ConvWPanel16 = {"u8_conv_w_panel16", "1", "x86_64",
                                       onnx::TensorProto::UINT8};
const I8GemmBFormat kI8ConvWGroupedPanel16 = {"i8_conv_w_grouped_panel16", "1", "x86_64",
                                              onnx::TensorProto::INT8, true};
const I8GemmBFormat kU8ConvWGroupedPanel16 = {"u8_conv_w_grouped_panel16", "1", "x86_64",
                                              onnx::TensorProto::UINT8, true};
const I8GemmBFormat kI8ConvWPanel16Dotprod = {
    "i8_conv_w_panel16_dotprod", "1",   "aarch64-dotprod",
    onnx::TensorProto::INT8,     false, device::IsaLevel::kDotprod};
const I8GemmBFormat kU8ConvWPanel16Dotprod = {
    "u8_conv_w_panel16_dotprod", "1",   "aarch64-dotprod",
    onnx::TensorProto::UINT8,    false, device::IsaLevel::kDotprod};
const I8GemmBFormat kI8ConvWGroupedPanel16Dotprod = {
    "i8_conv_w_grouped_panel16_dotprod", "1", "aarch64-dotprod", onnx::TensorProto::INT8, true,
    device::IsaLevel::kDotprod};
const I8GemmBFormat kU8ConvWGroupedPanel16Dotprod = {
    "u8_conv_w_grouped_panel16_dotprod", "1", "aarch64-dotprod", onnx::TensorProto::UINT8, true,
    device::IsaLevel::kDotprod};

std::span<const I8GemmBFormat* const> i8_conv_w_formats() {
  static const I8GemmBFormat* const kAll[] = {&kI8ConvWPanel16,
                                              &kU8ConvWPanel16,
                                              &kI8ConvWGroupedPanel16,
                                              &kU8ConvWGroupedPanel16,
                                              &kI8ConvWPanel16Dotprod,
                                              &kU8ConvWPanel16Dotprod,
                                              &kI8ConvWGroupedPanel16Dotprod,
                                              &kU8ConvWGroupedPanel16Dotprod};
  return kAll;
}

const I8GemmBFormat* i8_conv_w_format(int32_t source_type, int64_t groups) {
  if (groups < 1) return nullptr;
  for (const I8GemmBFormat* f : i8_conv_w_formats()) {
    if (f->source_type == source_type && f->grouped == (groups > 1) &&
        f->isa == device::IsaLevel::kRef)
      return f;
  }
  return nullptr;
}

const I8GemmBFormat* find_i8_conv_w_format(std::string_view name) {
  for (const I8GemmBFormat* f : i8_conv_w_formats()) {
    if (f->name == name) return f;
  }
  return nullptr;
}

Result<kernels::I8GemmShape> i8_conv_w_shape(int32_t source_type, std::span<const int64_t> dims,
                                             int64_t groups) {
  if (i8_conv_w_format(source_type) == nullptr) return invalid_argument("W must be int8 or uint8");
  if (dims.size() < 3 || dims.size() > 8) return invalid_argument("W must be of rank 3 to 8");
  constexpr int64_t kMax = int64_t(1) << 40;
  int64_t k = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] > kMax) return invalid_argument("W's dims are out of range");
    if (dims[i] == 0) return invalid_argument("empty weight: nothing to pack");
    if (i > 0) {
      if (k > kMax / dims[i]) return invalid_argument("W's dims are out of range");
      k *= dims[i];
    }
  }
  if (groups < 1 || groups > dims[0] || dims[0] % groups != 0) {
    return invalid_argument("group " + std::to_string(groups) + " does not divide W's " +
                            std::to_string(dims[0]) + " output channels");
  }
  // Every group's panels are padded to 16 channels: bounded like one B's.
  OP_ASSIGN_OR_RETURN(kernels::I8GemmShape s,
                      i8_gemm_b_shape(source_type, std::vector<int64_t>{k, dims[0] / groups}));
  if (s.panels() > (int64_t(1) << 48) / groups)
    return invalid_argument("W's dims are out of range");
  return s;
}

std::vector<uint64_t> i8_conv_w_dims(const kernels::I8GemmShape& s, size_t rank, int64_t groups) {
  if (groups > 1) {
    return {uint64_t(groups), uint64_t(s.panels()), uint64_t(s.k_groups()), uint64_t(rank)};
  }
  return {uint64_t(s.panels()), uint64_t(s.k_groups()), uint64_t(rank)};
}

uint64_t i8_conv_w_payload_bytes(const kernels::I8GemmShape& s, size_t rank, int64_t groups) {
  return uint64_t(groups) * s.packed_bytes() + uint64_t(rank) * 8;
}

onnx::StructTypeProto i8_conv_w_struct_type(const I8GemmBFormat& f) {
  const bool is_signed = f.source_type == onnx::TensorProto::INT8;
  const I8GemmBFormat* b = i8_gemm_b_format(f.source_type);
  onnx::StructTypeProto t;
  t.set_name(std::string(f.name));
  const std::string layout =
      std::string(" as the integer GEMM B [K, N] of ") + std::string(b->name) +
      ": per panel of 16 output channels, k_groups = ceil(K / 4) groups of 16 channels x 4 k "
      "(byte 4j + r of group g: channel 16p + j, flattened index 4g + r of its filter) as int8 " +
      (is_signed ? "W" : "W - 128") +
      ", then 16 int32 sums of those int8 values; rows past K and channels past N are 0. Then "
      "W's dims. Bound to W alone (no lineage).";
  t.set_doc_string(
      f.grouped ? std::string("ConvInteger / QLinearConv (group > 1) ") + type_word(f.source_type) +
                      " W [M, C/group, k...]: per group, its M/group output "
                      "channels (K = C/group * prod(kernel), N = M/group)" +
                      layout + " The groups follow one another."
                : std::string("ConvInteger / QLinearConv (group 1) ") + type_word(f.source_type) +
                      " W [M, C, k...] (K = C * prod(kernel), N = M)" + layout);
  add_meta(t, "format_version", std::string(f.version));
  add_meta(t, "source_type", type_word(f.source_type));
  add_meta(t, "stored", is_signed ? "w" : "w - 128");
  add_meta(t, "panel_width", "16");
  add_meta(t, "k_group", "4");
  add_meta(t, "lineage_roles", "");
  add_meta(t, "lineage_attrs", "");
  const int first = f.grouped ? 1 : 0;  // dims_param index of panels
  if (f.grouped) t.add_dims_param("groups");
  for (const char* p : {"panels", "k_groups", "rank"}) t.add_dims_param(p);
  onnx::TypeProto panels = array_of(panel_type(is_signed, first + 1), first);
  if (f.grouped) {
    auto* groups = t.mutable_structure()->add_field();
    groups->set_name("groups");
    onnx::TypeProto group;
    auto* g = group.mutable_struct_type()->mutable_structure()->add_field();
    g->set_name("panels");
    *g->mutable_type() = std::move(panels);
    *groups->mutable_type() = array_of(std::move(group), 0);
    groups->set_doc_string("group g: the panels of W's output channels [g M/group, (g+1) M/group)");
  } else {
    auto* field = t.mutable_structure()->add_field();
    field->set_name("panels");
    *field->mutable_type() = std::move(panels);
  }
  auto* shape = t.mutable_structure()->add_field();
  shape->set_name("shape");
  *shape->mutable_type() = array_of(leaf(onnx::TensorProto::INT64), first + 2);
  shape->set_doc_string(f.grouped ? "W's dims [M, C/group, k...]" : "W's dims [M, C, k...]");
  *t.mutable_decoder() = i8_conv_w_decoder(f);
  return t;
}

Status i8_conv_w_check_entry(const I8GemmBFormat& f, const onnx::StructTypeProto& type,
                             std::span<const uint64_t> dims, int32_t source_type,
                             std::span<const int64_t> source_dims, int64_t groups) {
  if (type.name() != f.name) {
    return invalid_argument("format '" + type.name() + "' is not '" + std::string(f.name) + "'");
  }
  std::string version, stored_type;
  for (const auto& e : type.metadata_props()) {
    if (e.key() == "format_version") version = e.value();
    if (e.key() == "source_type") stored_type = e.value();
  }
  if (version != f.version) {
    return invalid_argument("format '" + std::string(f.name) + "' version '" + version +
                            "', this build reads '" + std::string(f.version) + "'");
  }
  if (source_type != f.source_type || stored_type != type_word(f.source_type)) {
    return invalid_argument("format '" + std::string(f.name) + "' holds " +
                            type_word(f.source_type) + " W, this W is " +
                            (i8_conv_w_format(source_type) ? type_word(source_type) : "neither"));
  }
  if (f.grouped != (groups > 1)) {
    return invalid_argument("format '" + std::string(f.name) + "' holds W of " +
                            (f.grouped ? "group > 1" : "group 1") + ", this W's node has group " +
                            std::to_string(groups));
  }
  OP_ASSIGN_OR_RETURN(kernels::I8GemmShape s, i8_conv_w_shape(source_type, source_dims, groups));
  const auto want = i8_conv_w_dims(s, source_dims.size(), groups);
  if (dims.size() != want.size() || !std::equal(want.begin(), want.end(), dims.begin())) {
    return invalid_argument("format '" + std::string(f.name) + "' dims do not fit W's dims");
  }
  const google::protobuf::RepeatedPtrField<onnx::StructTypeProto> none;
  auto bits = types::struct_type_bits(none, type, dims);
  if (!bits.ok() || *bits != i8_conv_w_payload_bytes(s, source_dims.size(), groups) * 8) {
    return invalid_argument("format '" + std::string(f.name) +
                            "': the entry's type does not describe the packed panels of W");
  }
  return ok_status();
}

Status i8_conv_w_pack(const kernels::I8GemmShape& s, std::span<const uint8_t> w,
                      std::span<const int64_t> source_dims, std::span<uint8_t> out,
                      int64_t groups) {
  const uint64_t group_bytes = uint64_t(s.K) * uint64_t(s.N);
  if (groups < 1 || w.size() / uint64_t(groups) != group_bytes ||
      w.size() % uint64_t(groups) != 0) {
    return invalid_argument("W holds " + std::to_string(w.size()) + " bytes, " +
                            std::to_string(groups) + " groups of [" + std::to_string(s.N) + ", " +
                            std::to_string(s.K) + "] need " +
                            std::to_string(uint64_t(groups) * group_bytes));
  }
  if (out.size() != i8_conv_w_payload_bytes(s, source_dims.size(), groups)) {
    return invalid_argument("pack output size differs from the format's");
  }
  for (int64_t g = 0; g < groups; ++g) {
    kernels::i8_pack_b(s, w.data() + uint64_t(g) * group_bytes, size_t(s.K),
                       out.data() + uint64_t(g) * s.packed_bytes(), /*transposed=*/true);
  }
  std::memcpy(out.data() + uint64_t(groups) * s.packed_bytes(), source_dims.data(),
              source_dims.size() * 8);
  return ok_status();
}

}  // namespace onnx_prepack::pack
