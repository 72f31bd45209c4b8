// MatMulNBits weight formats: struct types, entry checks, lineage of a node,
// the weights compile packs and their packing from the model's initializers.
#include "pack/q_gemm_b.h"

#include <bit>
#include <cstring>
#include <set>

#include "digest/canonical_tensor.h"
#include "pack/function_builder.h"

namespace onnx_prepack::pack {
namespace {

static_assert(std::endian::native == std::endian::little, "packs are little-endian");

void add_meta(google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>* props,
              const std::string& key, const std::string& value) {
  auto* e = props->Add();
  e->set_key(key);
  e->set_value(value);
}

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

int64_t attr_int(const onnx::NodeProto& n, std::string_view name, int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

std::string input_name(const onnx::NodeProto& n, int i) {
  return i < n.input_size() ? n.input(i) : std::string();
}

// IEEE half to float, exact (pack layer: no runtime dependency).
float half_bits_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000 | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while ((mant & 0x400) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
  }
  return std::bit_cast<float>(bits);
}

// Canonical little-endian content of an initializer.
Result<std::vector<uint8_t>> content(const format::Model& model, const std::string& name) {
  const onnx::TensorProto* t = model.find_initializer(name);
  if (t == nullptr) return invalid_argument("no initializer '" + name + "'");
  digest::VectorSink sink;
  OP_ASSIGN_OR_RETURN(uint64_t n, digest::write_canonical_tensor(model, *t, name, sink));
  const auto& all = sink.bytes();
  return std::vector<uint8_t>(all.end() - ptrdiff_t(n), all.end());
}

std::vector<float> widen(const std::vector<uint8_t>& bytes, int32_t type) {
  if (type == onnx::TensorProto::FLOAT) {
    std::vector<float> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return out;
  }
  std::vector<float> out(bytes.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    out[i] = half_bits_to_float(h);
  }
  return out;
}

int64_t numel(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > (int64_t(1) << 40)) return -1;
    n *= d;
    if (n > (int64_t(1) << 42)) return -1;
  }
  return n;
}

bool is_real(int32_t t) { return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16; }

}  // namespace

const QGemmBFormat kQ4GemmBPanel16 = {"q4_gemm_b_panel16", "1", "x86_64", 4,
                                      device::IsaLevel::kRef};
const QGemmBFormat kQ8GemmBPanel16 = {"q8_gemm_b_panel16", "1", "x86_64", 8,
                                      device::IsaLevel::kRef};
const QGemmBFormat kQ4GemmBPanel16Aarch64 = {"q4_gemm_b_panel16_aarch64", "1", "aarch64-dotprod", 4,
                                             device::IsaLevel::kDotprod};
const QGemmBFormat kQ8GemmBPanel16Aarch64 = {"q8_gemm_b_panel16_aarch64", "1", "aarch64-dotprod", 8,
                                             device::IsaLevel::kDotprod};

namespace {
constexpr const QGemmBFormat* kAll[] = {&kQ4GemmBPanel16, &kQ8GemmBPanel16, &kQ4GemmBPanel16Aarch64,
                                        &kQ8GemmBPanel16Aarch64};
}  // namespace

std::span<const QGemmBFormat* const> q_gemm_b_formats() { return kAll; }

const QGemmBFormat* q_gemm_b_format(int bits, device::Machine machine) {
  const bool arm = machine == device::Machine::kAarch64;
  if (bits == 4) return arm ? &kQ4GemmBPanel16Aarch64 : &kQ4GemmBPanel16;
  if (bits == 8) return arm ? &kQ8GemmBPanel16Aarch64 : &kQ8GemmBPanel16;
  return nullptr;
}

const QGemmBFormat* find_q_gemm_b_format(std::string_view name) {
  for (const QGemmBFormat* f : kAll) {
    if (f->name == name) return f;
  }
  return nullptr;
}

std::vector<uint64_t> q_gemm_b_dims(const kernels::QGemmShape& s) {
  return {uint64_t(s.panels()), uint64_t(s.k_blocks()), uint64_t(s.code_bytes())};
}

uint64_t q_gemm_b_payload_bytes(const kernels::QGemmShape& s) { return s.packed_bytes(); }

namespace {

// Leaves records_codes UINT8 [panels, k_blocks, code_bytes], records_scales and
// records_zero_point_scales FLOAT [panels, k_blocks, 16] -> w FLOAT
// [k_blocks * block_size, panels * 16]: w[k, n] = s * q - s * z, the matrix the
// kernels multiply A by (rows past K in the last block and columns past N as
// packed: source codes, zero scales).
onnx::FunctionProto q_gemm_b_decoder(const QGemmBFormat& f) {
  using fn::node;
  onnx::FunctionProto d;
  d.set_name("decode_" + std::string(f.name));
  d.set_domain("onnx_prepack.decoders");
  auto* op = d.add_opset_import();
  op->set_domain("");
  op->set_version(18);  // BitwiseAnd
  for (const char* in : {"records_codes", "records_scales", "records_zero_point_scales"})
    d.add_input(in);
  node(d, "Shape", {"records_codes"}, "shape");
  fn::constant_ints(d, "zero", {0});
  fn::constant_ints(d, "one", {1});
  fn::constant_ints(d, "two", {2});
  node(d, "Slice", {"shape", "zero", "two"}, "panels_blocks");
  // One 64-byte group: int32 lane j (column 16p + j), byte r of the lane.
  fn::constant_ints(d, "group_tail", {-1, 16, 4});
  fn::int_attr(node(d, "Concat", {"panels_blocks", "group_tail"}, "group_shape"), "axis", 0);
  node(d, "Reshape", {"records_codes", "group_shape"}, "groups");  // [P, KB, G, 16, 4]
  std::string by_k = "groups";
  if (f.bits == 4) {  // byte r: k = 8g + r (low nibble), 8g + 4 + r (high nibble)
    fn::constant_u8(d, "low_mask", 15);
    fn::constant_u8(d, "four", 4);
    node(d, "BitwiseAnd", {"groups", "low_mask"}, "low");
    fn::string_attr(node(d, "BitShift", {"groups", "four"}, "high"), "direction", "RIGHT");
    fn::int_attr(node(d, "Concat", {"low", "high"}, "nibbles"), "axis", -1);  // [.., 16, 8]
    by_k = "nibbles";
  }
  fn::ints_attr(node(d, "Transpose", {by_k}, "k_major"), "perm", {0, 1, 2, 4, 3});
  fn::constant_ints(d, "column_tail", {-1, 16});
  fn::int_attr(node(d, "Concat", {"panels_blocks", "column_tail"}, "code_shape"), "axis", 0);
  node(d, "Reshape", {"k_major", "code_shape"}, "codes_kn");  // [P, KB, block, 16]
  fn::int_attr(node(d, "Cast", {"codes_kn"}, "q"), "to", onnx::TensorProto::FLOAT);
  node(d, "Unsqueeze", {"records_scales", "two"}, "s");
  node(d, "Unsqueeze", {"records_zero_point_scales", "two"}, "sz");
  node(d, "Mul", {"q", "s"}, "sq");
  node(d, "Sub", {"sq", "sz"}, "w4");  // [P, KB, block, 16]
  fn::ints_attr(node(d, "Transpose", {"w4"}, "w_blocks"), "perm", {1, 2, 0, 3});
  node(d, "Slice", {"shape", "zero", "one"}, "panels");
  fn::constant_ints(d, "sixteen", {16});
  node(d, "Mul", {"panels", "sixteen"}, "columns");
  fn::constant_ints(d, "minus_one", {-1});
  fn::int_attr(node(d, "Concat", {"minus_one", "columns"}, "w_shape"), "axis", 0);
  node(d, "Reshape", {"w_blocks", "w_shape"}, "w");
  d.add_output("w");
  fn::typed(d, "records_codes", onnx::TensorProto::UINT8);
  fn::typed(d, "records_scales", onnx::TensorProto::FLOAT);
  fn::typed(d, "records_zero_point_scales", onnx::TensorProto::FLOAT);
  fn::typed(d, "w", onnx::TensorProto::FLOAT);
  return d;
}

}  // namespace

onnx::StructTypeProto q_gemm_b_struct_type(const QGemmBFormat& f) {
  onnx::StructTypeProto t;
  t.set_name(std::string(f.name));
  t.set_doc_string(
      "MatMulNBits " + std::to_string(f.bits) +
      "-bit weight in panels of 16 columns: per panel and block of K one record of codes "
      "(int32 lane j = column 16p + j; " +
      (f.bits == 4 ? "byte r: k = 8g + r low nibble, 8g + 4 + r high nibble"
                   : "byte r: k = 4g + r") +
      "), 16 float scales s and 16 float s * zero_point. Lineage: scales, zero_points, bias; "
      "attr bits, block_size, K, N, accuracy_level.");
  add_meta(t.mutable_metadata_props(), "format_version", std::string(f.version));
  add_meta(t.mutable_metadata_props(), "bits", std::to_string(f.bits));
  add_meta(t.mutable_metadata_props(), "panel_width", "16");
  add_meta(t.mutable_metadata_props(), "lineage_roles", "scales,zero_points,bias");
  add_meta(t.mutable_metadata_props(), "lineage_attrs", "bits,block_size,K,N,accuracy_level");
  for (const char* p : {"panels", "k_blocks", "code_bytes"}) t.add_dims_param(p);
  onnx::TypeProto record;
  auto* rf = record.mutable_struct_type()->mutable_structure();
  auto* codes = rf->add_field();
  codes->set_name("codes");
  *codes->mutable_type() = array_of(leaf(onnx::TensorProto::UINT8), 2);
  auto* scales = rf->add_field();
  scales->set_name("scales");
  *scales->mutable_type() = array_of(leaf(onnx::TensorProto::FLOAT), -1, 16);
  auto* corr = rf->add_field();
  corr->set_name("zero_point_scales");
  *corr->mutable_type() = array_of(leaf(onnx::TensorProto::FLOAT), -1, 16);
  corr->set_doc_string("scale * zero point (absent zero point: 2^(bits-1))");
  auto* records = t.mutable_structure()->add_field();
  records->set_name("records");
  *records->mutable_type() = array_of(array_of(std::move(record), 1), 0);
  *t.mutable_decoder() = q_gemm_b_decoder(f);
  return t;
}

Status q_gemm_b_check_entry(const QGemmBFormat& f, const onnx::StructTypeProto& type,
                            std::span<const uint64_t> dims, const kernels::QGemmShape& s) {
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
  const auto want = q_gemm_b_dims(s);
  if (dims.size() != want.size() || !std::equal(want.begin(), want.end(), dims.begin())) {
    return invalid_argument("format '" + std::string(f.name) +
                            "' dims do not fit the node's K, N and block_size");
  }
  return ok_status();
}

resolve::LineageRequest matmul_nbits_lineage(const onnx::NodeProto& node) {
  resolve::LineageRequest r;
  r.roles = {{"scales", input_name(node, 2)},
             {"zero_points", input_name(node, 3)},
             {"bias", input_name(node, 5)}};
  r.attrs = {{"bits", std::to_string(attr_int(node, "bits", 4))},
             {"block_size", std::to_string(attr_int(node, "block_size", -1))},
             {"K", std::to_string(attr_int(node, "K", -1))},
             {"N", std::to_string(attr_int(node, "N", -1))},
             {"accuracy_level", std::to_string(attr_int(node, "accuracy_level", 0))}};
  return r;
}

Result<kernels::QGemmShape> matmul_nbits_shape(const onnx::NodeProto& node) {
  kernels::QGemmShape s;
  s.K = attr_int(node, "K", -1);
  s.N = attr_int(node, "N", -1);
  const int64_t bits = attr_int(node, "bits", 4), block = attr_int(node, "block_size", -1);
  if (s.K <= 0 || s.N <= 0 || s.K > (int64_t(1) << 40) || s.N > (int64_t(1) << 40)) {
    return invalid_argument("MatMulNBits: K and N must be positive");
  }
  if (bits != 4 && bits != 8) return invalid_argument("MatMulNBits: bits must be 4 or 8");
  if (block < 16 || block > 256 || (block & (block - 1)) != 0) {
    return invalid_argument("MatMulNBits: block_size must be a power of 2 in [16, 256]");
  }
  s.bits = int(bits);
  s.block = int(block);
  return s;
}

std::optional<QGemmBJob> q_gemm_b_job(const format::Model& model, const onnx::NodeProto& n) {
  const onnx::GraphProto& g = model.proto().graph();
  auto unique_init = [&](const std::string& name) -> const onnx::TensorProto* {
    if (name.empty() || model.count_initializers(name) != 1) return nullptr;
    for (const auto& i : g.input()) {
      if (i.name() == name) return nullptr;  // a fed input could override it
    }
    return model.find_initializer(name);
  };
  if (n.op_type() != "MatMulNBits" || n.domain() != "com.microsoft" || n.input_size() < 3) {
    return std::nullopt;
  }
  if (!input_name(n, 4).empty()) return std::nullopt;  // g_idx: refused by the runtime
  auto shape = matmul_nbits_shape(n);
  if (!shape.ok()) return std::nullopt;
  const kernels::QGemmShape& s = *shape;
  const onnx::TensorProto* b = unique_init(n.input(1));
  const onnx::TensorProto* sc = unique_init(n.input(2));
  if (b == nullptr || sc == nullptr || b->data_type() != onnx::TensorProto::UINT8 ||
      numel(*b) != s.N * s.k_blocks() * s.block * s.bits / 8 || !is_real(sc->data_type()) ||
      numel(*sc) != s.N * s.k_blocks()) {
    return std::nullopt;
  }
  const std::string zp_name = input_name(n, 3);
  if (!zp_name.empty()) {
    const onnx::TensorProto* zp = unique_init(zp_name);
    if (zp == nullptr) return std::nullopt;
    const bool packed = zp->data_type() == onnx::TensorProto::UINT8 &&
                        numel(*zp) == s.N * ((s.k_blocks() * s.bits + 7) / 8);
    const bool real = is_real(zp->data_type()) && numel(*zp) == s.N * s.k_blocks();
    if (!packed && !real) return std::nullopt;
  }
  return QGemmBJob{n.input(1), &n, s, q_gemm_b_format(s.bits)};
}

Status q_gemm_b_pack_job(const format::Model& model, const QGemmBJob& job, std::span<uint8_t> out) {
  const kernels::QGemmShape& s = job.shape;
  if (out.size() != q_gemm_b_payload_bytes(s)) {
    return invalid_argument("pack '" + std::string(job.format->name) + "' of '" + job.source +
                            "': output size differs from the format's");
  }
  OP_ASSIGN_OR_RETURN(std::vector<uint8_t> b, content(model, job.source));
  OP_ASSIGN_OR_RETURN(std::vector<uint8_t> sc_bytes, content(model, job.node->input(2)));
  const std::vector<float> scales =
      widen(sc_bytes, model.find_initializer(job.node->input(2))->data_type());
  kernels::QWeightSource src;
  src.b = b.data();
  src.scales = scales.data();
  std::vector<uint8_t> zp_bytes;
  std::vector<float> zp_float;
  const std::string zp_name = input_name(*job.node, 3);
  if (!zp_name.empty()) {
    OP_ASSIGN_OR_RETURN(zp_bytes, content(model, zp_name));
    const int32_t t = model.find_initializer(zp_name)->data_type();
    if (t == onnx::TensorProto::UINT8) {
      src.zp_packed = zp_bytes.data();
    } else {
      zp_float = widen(zp_bytes, t);
      src.zp_float = zp_float.data();
    }
  }
  kernels::q_pack_weights(s, src, out.data());
  return ok_status();
}

}  // namespace onnx_prepack::pack
