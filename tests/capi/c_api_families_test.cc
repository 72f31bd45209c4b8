// The C API over every pack family: op_weight_formats lists a Conv filter's
// and a MatMulNBits weight's formats from the registry, op_resolver_store
// publishes our own formats of any family (checked against the family's
// pack), and a lineage-bound pack is found in the store only for the same
// scales.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "onnx_prepack/c_api.h"
#include "testing/test_models.h"

namespace onnx_prepack {
namespace {

using testing::TempDir;

std::string last() { return op_last_error_message(); }

onnx::ValueInfoProto value_info(const std::string& name, std::vector<int64_t> dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  return v;
}

onnx::ModelProto base_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(17);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  m.mutable_graph()->set_name("g");
  return m;
}

onnx::AttributeProto int_attr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

// Conv "conv" of x [1, 3, 8, 8] with filter "wc" [8, 3, 3, 3].
onnx::ModelProto conv_model() {
  onnx::ModelProto m = base_model();
  auto* g = m.mutable_graph();
  *g->add_input() = value_info("x", {1, 3, 8, 8});
  *g->add_output() = value_info("y", {1, 8, 6, 6});
  *g->add_initializer() =
      testing::float_tensor("wc", {8, 3, 3, 3}, testing::pseudo_random_floats(8 * 27, 3));
  auto* n = g->add_node();
  n->set_name("conv");
  n->set_op_type("Conv");
  n->add_input("x");
  n->add_input("wc");
  n->add_output("y");
  return m;
}

// MatMulNBits "nbits": K 64, N 24, 4 bits, blocks of 32; scales "qs" times `scale`.
onnx::ModelProto nbits_model(float scale) {
  onnx::ModelProto m = base_model();
  auto* g = m.mutable_graph();
  *g->add_input() = value_info("x", {2, 64});
  *g->add_output() = value_info("y", {2, 24});
  onnx::TensorProto qb;
  qb.set_name("qb");
  qb.set_data_type(onnx::TensorProto::UINT8);
  for (int64_t d : {24, 2, 16}) qb.add_dims(d);
  std::string bytes(24 * 2 * 16, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char((i * 37 + 11) & 0xff);
  qb.set_raw_data(bytes);
  *g->add_initializer() = qb;
  std::vector<float> scales = testing::pseudo_random_floats(48, 5);
  for (float& s : scales) s = 0.01f + std::abs(s) * scale;
  *g->add_initializer() = testing::float_tensor("qs", {48}, scales);
  auto* n = g->add_node();
  n->set_name("nbits");
  n->set_op_type("MatMulNBits");
  n->set_domain("com.microsoft");
  n->add_input("x");
  n->add_input("qb");
  n->add_input("qs");
  n->add_output("y");
  for (auto [k, v] : std::vector<std::pair<const char*, int64_t>>{
           {"K", 64}, {"N", 24}, {"bits", 4}, {"block_size", 32}})
    *n->add_attribute() = int_attr(k, v);
  return m;
}

struct Handles {
  op_model* model = nullptr;
  op_resolver* resolver = nullptr;
  ~Handles() {
    op_resolver_free(resolver);
    op_model_free(model);
  }
};

// The formats of `weight` as op_weight_formats lists them (all levels).
std::vector<op_acceptable_format> formats_of(op_model* m, const char* weight) {
  size_t n = 0;
  EXPECT_EQ(op_weight_formats(m, weight, nullptr, 0, nullptr, 0, &n), OP_STATUS_OK) << last();
  std::vector<op_acceptable_format> f(n);
  EXPECT_EQ(op_weight_formats(m, weight, nullptr, 0, f.data(), f.size(), &n), OP_STATUS_OK);
  return f;
}

// Compiles `src` for the host, resolves `weight` in the compiled model (a
// hit), stores that pack through a resolver of `src` with a read-write cache
// at `cache`, and resolves `weight` of `src` again from the cache alone.
void store_and_find(const TempDir& dir, const std::string& src, const char* weight,
                    const std::string& cache, const std::string& expect_format_prefix) {
  const std::string compiled = dir.file("compiled-" + std::string(weight) + ".onnx");
  op_compile_options co = op_compile_options_default();
  co.no_memo = 1;
  op_compile_summary summary;
  ASSERT_EQ(op_compile(src.c_str(), compiled.c_str(), &co, &summary), OP_STATUS_OK) << last();
  ASSERT_GE(summary.entries, 1u);

  Handles c;
  ASSERT_EQ(op_model_open(compiled.c_str(), &c.model), OP_STATUS_OK) << last();
  std::vector<op_acceptable_format> cf = formats_of(c.model, weight);
  ASSERT_FALSE(cf.empty());
  for (const auto& f : cf) EXPECT_EQ(std::string(f.name).rfind(expect_format_prefix, 0), 0u);
  ASSERT_EQ(op_resolver_create(c.model, nullptr, &c.resolver), OP_STATUS_OK) << last();
  op_resolution hit;
  ASSERT_EQ(op_resolve(c.resolver, weight, cf.data(), cf.size(), &hit), OP_STATUS_OK);
  ASSERT_EQ(hit.hit, 1) << hit.reason << ": " << hit.detail;

  Handles p;
  ASSERT_EQ(op_model_open(src.c_str(), &p.model), OP_STATUS_OK);
  std::vector<op_acceptable_format> pf = formats_of(p.model, weight);
  ASSERT_EQ(pf.size(), cf.size());
  op_resolver_options ro = op_resolver_options_default();
  ro.cache_dir = cache.c_str();
  ASSERT_EQ(op_resolver_create(p.model, &ro, &p.resolver), OP_STATUS_OK) << last();
  const op_acceptable_format& fmt = pf[size_t(hit.format_index)];
  // A payload one byte short, or other dims, is refused before anything is written.
  EXPECT_EQ(op_resolver_store(p.resolver, weight, &fmt, nullptr, 0, hit.dims, hit.n_dims,
                              hit.payload, hit.payload_size - 1),
            OP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last().find("needs " + std::to_string(hit.payload_size)), std::string::npos) << last();
  std::vector<uint64_t> wrong(hit.dims, hit.dims + hit.n_dims);
  wrong[0] += 1;
  EXPECT_NE(op_resolver_store(p.resolver, weight, &fmt, nullptr, 0, wrong.data(), wrong.size(),
                              hit.payload, hit.payload_size),
            OP_STATUS_OK);
  ASSERT_EQ(op_resolver_store(p.resolver, weight, &fmt, nullptr, 0, hit.dims, hit.n_dims,
                              hit.payload, hit.payload_size),
            OP_STATUS_OK)
      << last();

  Handles again;
  ASSERT_EQ(op_model_open(src.c_str(), &again.model), OP_STATUS_OK);
  std::vector<op_acceptable_format> af = formats_of(again.model, weight);
  ASSERT_EQ(op_resolver_create(again.model, &ro, &again.resolver), OP_STATUS_OK);
  op_resolution from_cache;
  ASSERT_EQ(op_resolve(again.resolver, weight, af.data(), af.size(), &from_cache), OP_STATUS_OK);
  ASSERT_EQ(from_cache.hit, 1) << from_cache.reason << ": " << from_cache.detail;
  EXPECT_EQ(from_cache.entry, -1);  // the cache store, not a model entry
  ASSERT_EQ(from_cache.payload_size, hit.payload_size);
  EXPECT_EQ(std::memcmp(from_cache.payload, hit.payload, hit.payload_size), 0);
}

TEST(CApiFamilies, WeightFormatsComeFromTheRegistry) {
  TempDir dir;
  const std::string path = dir.file("conv.onnx");
  testing::write_bytes(path, conv_model().SerializeAsString());
  Handles h;
  ASSERT_EQ(op_model_open(path.c_str(), &h.model), OP_STATUS_OK) << last();
  std::vector<op_acceptable_format> f = formats_of(h.model, "wc");
  ASSERT_FALSE(f.empty());
  size_t n = 0;
  op_acceptable_format one;
  ASSERT_EQ(op_weight_formats(h.model, "wc", "conv", 1, &one, 1, &n), OP_STATUS_OK);
  EXPECT_LE(n, f.size());
  // The family's dims check, run by the caller itself: a filter of other
  // dims is refused with a message.
  const int64_t src_dims[4] = {8, 3, 3, 3};
  const uint64_t bad_dims[1] = {7};
  char message[256] = {0};
  EXPECT_NE(f[0].check_dims(f[0].user_data, OP_DTYPE_FLOAT, src_dims, 4, bad_dims, 1, message,
                            sizeof(message)),
            0);
  EXPECT_GT(std::strlen(message), 0u);
  EXPECT_EQ(op_weight_formats(h.model, "wc", "elsewhere", 0, nullptr, 0, &n), OP_STATUS_NOT_FOUND);
  EXPECT_NE(last().find("'wc'"), std::string::npos) << last();
  EXPECT_EQ(op_weight_formats(h.model, "x", nullptr, 0, nullptr, 0, &n), OP_STATUS_NOT_FOUND);
  EXPECT_EQ(op_weight_formats(nullptr, "wc", nullptr, 0, nullptr, 0, &n),
            OP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(op_weight_formats(h.model, "wc", nullptr, 0, nullptr, 2, &n),
            OP_STATUS_INVALID_ARGUMENT);
}

TEST(CApiFamilies, StoreAndFindAConvFilter) {
  TempDir dir;
  const std::string path = dir.file("conv.onnx");
  testing::write_bytes(path, conv_model().SerializeAsString());
  store_and_find(dir, path, "wc", dir.file("cache"), "f32_conv_filter");
}

TEST(CApiFamilies, LineageBoundPackIsFoundOnlyForItsScales) {
  TempDir dir;
  const std::string path = dir.file("nbits.onnx");
  testing::write_bytes(path, nbits_model(0.1f).SerializeAsString());
  const std::string cache = dir.file("cache");
  store_and_find(dir, path, "qb", cache, "");

  // The same packed weight with other scales: the store's key differs.
  const std::string other = dir.file("other.onnx");
  testing::write_bytes(other, nbits_model(0.2f).SerializeAsString());
  Handles h;
  ASSERT_EQ(op_model_open(other.c_str(), &h.model), OP_STATUS_OK);
  std::vector<op_acceptable_format> f = formats_of(h.model, "qb");
  op_resolver_options ro = op_resolver_options_default();
  ro.cache_dir = cache.c_str();
  ro.cache_mode = OP_CACHE_READ_ONLY;
  ASSERT_EQ(op_resolver_create(h.model, &ro, &h.resolver), OP_STATUS_OK);
  op_resolution res;
  ASSERT_EQ(op_resolve(h.resolver, "qb", f.data(), f.size(), &res), OP_STATUS_OK);
  EXPECT_EQ(res.hit, 0) << res.detail;
}

}  // namespace
}  // namespace onnx_prepack
