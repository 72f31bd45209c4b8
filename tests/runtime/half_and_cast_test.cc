// FLOAT16 graphs (through the half adapter) and float8 casts agree with ONNX
// Runtime (onnxruntime-node via tests/runtime/ort_run.js); the vectorised
// activations (vec_act.h) agree bit for bit across ISAs and with the math.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>

#include "device/cpu_features.h"
#include "format/model_writer.h"
#include "kernels/vec_math/vec_act.h"
#include "kernels/vec_math/vec_half.h"
#include "runtime/npy.h"
#include "runtime/ops/math/float8.h"
#include "runtime/session.h"
#include "testing/plan_status.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

bool ort_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0;
}

onnx::TensorProto half_tensor(const std::string& name, std::vector<int64_t> dims,
                              const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(kFloat16);
  for (int64_t d : dims) t.add_dims(d);
  std::string raw(values.size() * 2, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t h = float_to_half(values[i]);
    std::memcpy(&raw[i * 2], &h, 2);
  }
  t.set_raw_data(raw);
  return t;
}

void add_io(onnx::ValueInfoProto* v, const std::string& name, int32_t type,
            std::vector<int64_t> dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                          std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g->node_size()));
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

onnx::ModelProto model_with_opset(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(9);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  return m;
}

// Runs `m` on `in` (fed as `input`) with ONNX Runtime and with a Session;
// returns {ours, ort} for output 0.
std::pair<HostTensor, HostTensor> run_both(const onnx::ModelProto& m, const std::string& input,
                                           const HostTensor& in) {
  testing::TempDir dir;
  std::string path = dir.file("model.onnx");
  EXPECT_TRUE(format::write_model_inline(m, path).ok());
  EXPECT_TRUE(write_npy(dir.file("in.npy"), in.view()).ok());
  std::string cmd = "node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " + path +
                    " " + dir.file("ort") + " " + input + "=" + dir.file("in.npy");
  std::string log;
  EXPECT_EQ(testing::run_command(cmd, &log), 0) << log;
  auto want = read_npy(dir.file("ort/" + m.graph().output(0).name() + ".npy"));
  EXPECT_TRUE(want.ok()) << want.status().message();
  auto loaded = format::Model::load(path);
  EXPECT_TRUE(loaded.ok());
  std::shared_ptr<const format::Model> model(std::move(*loaded));
  auto s = Session::create(model, SessionOptions{});
  EXPECT_TRUE(s.ok()) << s.status().message();
  Status st = testing::plan_status((*s)->plan({{input, {in.dtype(), in.shape()}}}));
  EXPECT_TRUE(st.ok()) << st.message();
  auto got = (*s)->run({{input, in.view()}});
  EXPECT_TRUE(got.ok()) << got.status().message();
  return {std::move((*got)[0]), std::move(*want)};
}

// MatMul + Add + Gelu + LayerNormalization, all FLOAT16 (opset 20).
TEST(HalfAdapter, Float16BlockAgreesWithOrt) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  const int64_t rows = 6, in_dim = 64, out_dim = 96;
  onnx::ModelProto m = model_with_opset(20);
  auto* g = m.mutable_graph();
  g->set_name("f16_block");
  auto w = testing::pseudo_random_floats(size_t(in_dim * out_dim), 3);
  for (float& v : w) v *= 0.2f;
  auto b = testing::pseudo_random_floats(size_t(out_dim), 4);
  auto scale = testing::pseudo_random_floats(size_t(out_dim), 5);
  for (float& v : scale) v = 1.0f + 0.2f * v;
  auto bias = testing::pseudo_random_floats(size_t(out_dim), 6);
  *g->add_initializer() = half_tensor("W", {in_dim, out_dim}, w);
  *g->add_initializer() = half_tensor("B", {out_dim}, b);
  *g->add_initializer() = half_tensor("S", {out_dim}, scale);
  *g->add_initializer() = half_tensor("Z", {out_dim}, bias);
  add_node(g, "MatMul", {"x", "W"}, {"m"});
  add_node(g, "Add", {"m", "B"}, {"a"});
  add_node(g, "Gelu", {"a"}, {"g"});
  auto* ln = add_node(g, "LayerNormalization", {"g", "S", "Z"}, {"y"});
  auto* eps = ln->add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(1e-5f);
  add_io(g->add_input(), "x", kFloat16, {rows, in_dim});
  add_io(g->add_output(), "y", kFloat16, {rows, out_dim});

  auto xs = testing::pseudo_random_floats(size_t(rows * in_dim), 7);
  HostTensor x = HostTensor::allocate(kFloat16, {rows, in_dim});
  for (size_t i = 0; i < xs.size(); ++i)
    static_cast<uint16_t*>(x.mutable_data())[i] = float_to_half(2.0f * xs[i]);
  auto [got, want] = run_both(m, "x", x);
  ASSERT_EQ(got.dtype(), kFloat16);
  ASSERT_EQ(want.dtype(), kFloat16);
  ASSERT_EQ(got.shape(), want.shape());
  // ONNX Runtime's CPU provider has no float16 kernel for some of these ops: it
  // runs them in float and drops the casts between them, so its intermediate
  // values are not rounded where ours are. Tolerance: ORT's own default for
  // float16 outputs (test/providers/checkers.cc: 0.005 absolute + 1e-3 relative).
  double worst = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    float g16 = half_to_float(got.as<uint16_t>()[i]);
    float w16 = half_to_float(want.as<uint16_t>()[i]);
    EXPECT_LE(std::fabs(g16 - w16), 0.005f + 1e-3f * std::fabs(w16))
        << "element " << i << ": " << g16 << " vs " << w16;
    worst = std::max(worst, double(std::fabs(g16 - w16)));
  }
  std::cout << "[float16 block] max |ours - ort| " << worst << "\n";
}

// float -> float8 (saturating and not) -> float: every float8 type, values
// around each format's range, ties, subnormals, infinities and NaN.
TEST(Float8Cast, AgreesWithOrt) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.5f,
                          3.14159f,
                          448.0f,
                          464.0f,
                          480.0f,
                          500.0f,
                          -1000.0f,
                          57344.0f,
                          61440.0f,
                          70000.0f,
                          240.0f,
                          250.0f,
                          1e-3f,
                          -2e-3f,
                          0.0078125f,
                          0.01171875f,
                          1e-6f,
                          1e-9f,
                          0.1f,
                          17.0f,
                          18.0f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  auto r = testing::pseudo_random_floats(64, 9);
  for (float f : r) v.push_back(f * 300.0f);
  for (int32_t type : {kFloat8E4M3FN, kFloat8E4M3FNUZ, kFloat8E5M2, kFloat8E5M2FNUZ}) {
    for (int saturate : {1, 0}) {
      onnx::ModelProto m = model_with_opset(19);
      auto* g = m.mutable_graph();
      g->set_name("f8");
      auto* c = add_node(g, "Cast", {"x"}, {"q"});
      auto* to = c->add_attribute();
      to->set_name("to");
      to->set_type(onnx::AttributeProto::INT);
      to->set_i(type);
      auto* sat = c->add_attribute();
      sat->set_name("saturate");
      sat->set_type(onnx::AttributeProto::INT);
      sat->set_i(saturate);
      auto* back = add_node(g, "Cast", {"q"}, {"y"});
      auto* to2 = back->add_attribute();
      to2->set_name("to");
      to2->set_type(onnx::AttributeProto::INT);
      to2->set_i(kFloat);
      add_io(g->add_input(), "x", kFloat, {int64_t(v.size())});
      add_io(g->add_output(), "y", kFloat, {int64_t(v.size())});
      HostTensor x = HostTensor::allocate(kFloat, {int64_t(v.size())});
      std::memcpy(x.mutable_data(), v.data(), v.size() * 4);
      auto [got, want] = run_both(m, "x", x);
      ASSERT_EQ(got.numel(), want.numel());
      float max = 0;  // the format's largest finite value
      for (int c = 0; c < 256; ++c) {
        float f = math::float8_to_float(uint8_t(c), type);
        if (std::isfinite(f)) max = std::max(max, f);
      }
      for (int64_t i = 0; i < got.numel(); ++i) {
        // Without saturation, ONNX Runtime 1.30 departs from the ONNX table for
        // values past the largest finite one (E4M3FN: 480 -> 448, E5M2:
        // 61440 -> NaN); ours follows the table (NaN, resp. infinity).
        if (!saturate && std::fabs(v[size_t(i)]) > max) continue;
        float a = got.as<float>()[i], b = want.as<float>()[i];
        EXPECT_TRUE((std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0)
            << dtype_name(type) << " saturate " << saturate << ": " << v[size_t(i)] << " -> " << a
            << ", ORT " << b;
      }
    }
  }
}

// Every float8 code decodes and encodes back to itself (NaNs to NaN).
TEST(Float8Cast, EveryCodeRoundTrips) {
  for (int32_t type : {kFloat8E4M3FN, kFloat8E4M3FNUZ, kFloat8E5M2, kFloat8E5M2FNUZ}) {
    for (int c = 0; c < 256; ++c) {
      float f = math::float8_to_float(uint8_t(c), type);
      uint8_t back = math::float_to_float8(f, type, false);
      if (std::isnan(f)) {
        EXPECT_TRUE(std::isnan(math::float8_to_float(back, type)));
      } else if (f == 0.0f && (type == kFloat8E4M3FNUZ || type == kFloat8E5M2FNUZ)) {
        EXPECT_EQ(back, 0);
      } else {
        EXPECT_EQ(back, c) << dtype_name(type) << " code " << c << " = " << f;
      }
    }
  }
}

std::vector<float> activation_inputs() {
  std::vector<float> x = testing::pseudo_random_floats(1000, 21);
  for (float& v : x) v *= 12.0f;
  for (float v : {0.0f, -0.0f, 3.0f, -3.0f, 88.5f, 88.0f, 88.8f, -87.0f, -90.0f, -200.0f, 200.0f,
                  std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()})
    x.push_back(v);
  return x;
}

TEST(VecAct, IsasAgreeBitForBitAndWithTheMath) {
  auto x = activation_inputs();
  std::vector<device::IsaLevel> levels = {device::IsaLevel::kAvx2, device::IsaLevel::kAvx512,
                                          device::IsaLevel::kNeon};
  for (int op = kernels::vec::kActClip; op <= kernels::vec::kActSigmoid; ++op) {
    const float p0 = op == kernels::vec::kActClip ? -1.5f : 0.2f,
                p1 = op == kernels::vec::kActClip ? 6.0f : 0.5f;
    std::vector<float> ref(x.size());
    kernels::vec::f32_act_ref(op, x.data(), ref.data(), x.size(), p0, p1);
    for (size_t i = 0; i < x.size(); ++i) {
      double v = x[i], want;
      switch (op) {
        case kernels::vec::kActClip:
          want = std::min<double>(p1, std::max<double>(p0, v));
          break;
        case kernels::vec::kActHardSigmoid:
          want = std::max(0.0, std::min(1.0, p0 * v + p1));
          break;
        case kernels::vec::kActHardSwish:
          want = v * std::max(0.0, std::min(1.0, v / 6 + 0.5));
          break;
        case kernels::vec::kActLeakyRelu:
          want = v >= 0 ? v : p0 * v;
          break;
        case kernels::vec::kActExp:
          want = std::exp(v);
          break;
        default:
          want = 1 / (1 + std::exp(-v));
      }
      if (std::isnan(v) || std::isnan(want)) {  // NaN in, or inf * 0
        EXPECT_TRUE(std::isnan(ref[i])) << "op " << op << " x " << v;
        continue;
      }
      if (op == kernels::vec::kActExp && want < 1.2e-38) {  // below the normal range: 0
        EXPECT_LE(ref[i], 1.2e-38f);
        continue;
      }
      if (std::isinf(float(want))) {
        EXPECT_EQ(ref[i], float(want)) << "op " << op << " x " << v;
        continue;
      }
      // Relative to the result, and to x where the result cancels (HardSwish near -3).
      EXPECT_NEAR(ref[i], want, 4e-7 * (std::fabs(want) + std::fabs(v)) + 1e-30)
          << "op " << op << " x " << v;
    }
    for (auto level : levels) {
      if (device::host_isa_level() < level) continue;
      std::vector<float> got(x.size());
      // Odd lengths exercise the masked tails.
      for (size_t n : {x.size(), size_t(13), size_t(7)}) {
        kernels::vec::act_kernel(level)(op, x.data(), got.data(), n, p0, p1);
        EXPECT_EQ(std::memcmp(got.data(), ref.data(), n * 4), 0) << "op " << op;
      }
    }
  }
}

// The vectorised 16-bit conversions give the scalar conversions' bits: every
// float16 / bfloat16 code widened, and floats around every rounding case narrowed.
TEST(VecHalf, AgreesWithTheScalarConversions) {
  const kernels::vec::HalfConvert& ref = kernels::vec::half_convert(device::IsaLevel::kRef);
  bool ran = false;
  for (device::IsaLevel level : {device::IsaLevel::kAvx2, device::IsaLevel::kNeon}) {
    if (!(level <= device::host_isa_level())) continue;
    ran = true;
    const std::string name(device::isa_level_name(level));
    const kernels::vec::HalfConvert& vec = kernels::vec::half_convert(level);
    std::vector<uint16_t> codes(65536 + 3);
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = uint16_t(i);
    std::vector<float> a(codes.size()), b(codes.size());
    for (bool bf : {false, true}) {
      (bf ? ref.bf16_to_f32 : ref.f16_to_f32)(codes.data(), a.data(), codes.size());
      (bf ? vec.bf16_to_f32 : vec.f16_to_f32)(codes.data(), b.data(), codes.size());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0)
          << (bf ? "bf16" : "f16") << " " << name;
    }
    // Floats: every float16 value and the midpoints and neighbours between them,
    // bfloat16 ties, huge values, subnormals, infinities and NaNs.
    std::vector<float> f;
    for (uint32_t h = 0; h < 0x10000; h += 7) {
      float v = half_to_float(uint16_t(h)), w = half_to_float(uint16_t(h + 1));
      f.push_back(v);
      if (std::isfinite(v) && std::isfinite(w)) {
        float mid = (v + w) / 2;
        f.push_back(mid);
        f.push_back(std::nextafter(mid, 0.0f));
        f.push_back(std::nextafter(mid, 1e30f));
      }
    }
    for (uint32_t bits : {0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0x00000001u, 0x7f800001u,
                          0xffc00001u, 0x477ff000u, 0x477fefffu, 0x33000000u, 0x33000001u}) {
      float v;
      std::memcpy(&v, &bits, 4);
      f.push_back(v);
    }
    std::vector<uint16_t> x(f.size()), y(f.size());
    for (bool bf : {false, true}) {
      (bf ? ref.f32_to_bf16 : ref.f32_to_f16)(f.data(), x.data(), f.size());
      (bf ? vec.f32_to_bf16 : vec.f32_to_f16)(f.data(), y.data(), f.size());
      for (size_t i = 0; i < f.size(); ++i)
        ASSERT_EQ(x[i], y[i]) << (bf ? "bf16" : "f16") << " of " << f[i] << " (element " << i
                              << ") " << name;
    }
  }
  if (!ran) GTEST_SKIP() << "no AVX2 or NEON";
}

// Single-operator float models on a large tensor (vectorised paths, masked
// tails, work split over threads) agree with ONNX Runtime.
TEST(MathOps, LargeTensorActivationsAgreeWithOrt) {
  if (!ort_available()) GTEST_SKIP() << "node or onnxruntime-node not available";
  const std::vector<int64_t> dims = {2, 5, 37, 41};
  auto xs = testing::pseudo_random_floats(size_t(2 * 5 * 37 * 41), 31);
  HostTensor x = HostTensor::allocate(kFloat, dims);
  for (size_t i = 0; i < xs.size(); ++i) static_cast<float*>(x.mutable_data())[i] = 8.0f * xs[i];
  struct Case {
    const char* op;
    int opset;
  };
  for (Case c :
       {Case{"Clip", 13}, Case{"HardSigmoid", 13}, Case{"HardSwish", 14}, Case{"LeakyRelu", 13},
        Case{"Exp", 13}, Case{"Sigmoid", 13}, Case{"Elu", 13}, Case{"Selu", 13},
        Case{"Softplus", 13}, Case{"Softsign", 13}, Case{"Mish", 18}, Case{"LogSoftmax", 13},
        Case{"Hardmax", 13}, Case{"Abs", 13}, Case{"ReduceLogSumExp", 13}, Case{"ReduceL2", 13}}) {
    onnx::ModelProto m = model_with_opset(c.opset);
    auto* g = m.mutable_graph();
    g->set_name(c.op);
    std::vector<std::string> in = {"x"};
    if (std::string(c.op) == "Clip") {
      *g->add_initializer() = testing::float_tensor("lo", {}, {-2.5f});
      *g->add_initializer() = testing::float_tensor("hi", {}, {3.0f});
      in = {"x", "lo", "hi"};
    }
    auto* n = add_node(g, c.op, in, {"y"});
    if (std::string(c.op) == "LeakyRelu") {
      auto* a = n->add_attribute();
      a->set_name("alpha");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(0.1f);
    }
    if (std::string(c.op).rfind("Reduce", 0) == 0) {
      auto* a = n->add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(1);
      a->add_ints(3);
    }
    add_io(g->add_input(), "x", kFloat, dims);
    auto* out = g->add_output();
    out->set_name("y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
    auto [got, want] = run_both(m, "x", x);
    ASSERT_EQ(got.shape(), want.shape()) << c.op;
    // 1e-6 absolute + 1e-5 relative: ORT's logistic (MLAS) is accurate to ~1e-7
    // absolute but not relative for tiny outputs (sigmoid(-8) differs by 2e-4
    // relative); a few ulps elsewhere (cancellation in Elu, HardSwish).
    for (int64_t i = 0; i < got.numel(); ++i) {
      double gv = got.as<float>()[i], wv = want.as<float>()[i];
      ASSERT_LE(std::fabs(gv - wv), 1e-6 + 1e-5 * std::fabs(wv))
          << c.op << " element " << i << " of x " << xs[size_t(i)] * 8 << ": " << gv << " vs "
          << wv;
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
