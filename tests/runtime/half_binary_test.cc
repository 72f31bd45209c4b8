// FLOAT16 Add/Sub/Mul/Div through the half adapter (runtime/half_adapter.cc):
// on an aarch64 host with FEAT_FP16 the fast path computes on the 16-bit
// buffers (vec_half_binary.h); everywhere the session's outputs must equal,
// bit for bit, the widen / float / narrow computation spelled out here, and the
// run with ONNX_PREPACK_MAX_ISA capped at neon (no fp16: widening) the uncapped
// run. Inputs: every float16 value against a scrambled second operand, a
// constant scalar on either side, on a pool (the work is split).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "format/model.h"
#include "kernels/vec_math/vec_half.h"
#include "kernels/vec_math/vec_half_binary.h"
#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::runtime {
namespace {

using kernels::vec::float_to_half;
using kernels::vec::half_to_float;

constexpr int64_t kN = 65536;
constexpr uint16_t kScalar = 0x3e01;  // 1.5004883

void add_io(onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(kFloat16);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

void add_node(onnx::GraphProto* g, const std::string& op, const std::string& a,
              const std::string& b, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out);
  n->add_input(a);
  n->add_input(b);
  n->add_output(out);
}

// x, y: [kN]; c: a [1] float16 initializer. Outputs (all FLOAT16):
// add = x + y, sub = x - y, mul = x * y, div = x / y, mulc = x * c,
// csub = c - y, add2 = add * y (a computed input).
onnx::ModelProto model() {
  onnx::ModelProto m;
  m.set_ir_version(9);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("half_binary");
  auto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(kFloat16);
  c->add_dims(1);
  c->set_raw_data(std::string(reinterpret_cast<const char*>(&kScalar), 2));
  add_node(g, "Add", "x", "y", "add");
  add_node(g, "Sub", "x", "y", "sub");
  add_node(g, "Mul", "x", "y", "mul");
  add_node(g, "Div", "x", "y", "div");
  add_node(g, "Mul", "x", "c", "mulc");
  add_node(g, "Sub", "c", "y", "csub");
  add_node(g, "Mul", "add", "y", "add2");
  add_io(g->add_input(), "x", {kN});
  add_io(g->add_input(), "y", {kN});
  for (const char* out : {"add", "sub", "mul", "div", "mulc", "csub", "add2"})
    add_io(g->add_output(), out, {kN});
  return m;
}

std::vector<std::vector<uint16_t>> run(const std::vector<uint16_t>& x,
                                       const std::vector<uint16_t>& y,
                                       std::optional<device::IsaLevel> cap) {
  device::set_max_isa(cap);
  base::ThreadPool pool(3);
  SessionOptions opts;
  opts.pool = &pool;
  auto m = std::shared_ptr<const format::Model>(format::Model::from_proto(model(), "."));
  auto s = Session::create(m, opts);
  EXPECT_TRUE(s.ok()) << s.status().message();
  std::vector<std::vector<uint16_t>> outs;
  if (s.ok()) {
    std::map<std::string, Session::Feed> feeds = {{"x", {kFloat16, {kN}, nullptr}},
                                                  {"y", {kFloat16, {kN}, nullptr}}};
    Status st = testing::plan_status((*s)->plan(feeds));
    EXPECT_TRUE(st.ok()) << st.message();
    Tensor xt{kFloat16, {kN}, const_cast<uint16_t*>(x.data())};
    Tensor yt{kFloat16, {kN}, const_cast<uint16_t*>(y.data())};
    auto got = (*s)->run({{"x", xt}, {"y", yt}});
    EXPECT_TRUE(got.ok()) << got.status().message();
    if (got.ok()) {
      for (const HostTensor& t : *got) {
        EXPECT_EQ(t.dtype(), kFloat16);
        const auto* p = t.as<uint16_t>();
        outs.emplace_back(p, p + t.numel());
      }
    }
  }
  device::set_max_isa(std::nullopt);
  return outs;
}

// What the adapter computes without the fast path: widen (a signalling NaN
// quieted), the float operation, round to nearest even.
float widen(uint16_t h) {
  const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
  return half_to_float(nan ? uint16_t(h | 0x200) : h);
}
uint16_t add(uint16_t a, uint16_t b) { return float_to_half(widen(a) + widen(b)); }
uint16_t sub(uint16_t a, uint16_t b) { return float_to_half(widen(a) - widen(b)); }
uint16_t mul(uint16_t a, uint16_t b) { return float_to_half(widen(a) * widen(b)); }
uint16_t div(uint16_t a, uint16_t b) { return float_to_half(widen(a) / widen(b)); }

bool is_nan(uint16_t h) { return (h & 0x7fff) > 0x7c00; }

// An invalid operation's default NaN has the machine's sign (x86-64: negative).
// Where two NaNs meet, which one the float operation returns depends on the
// operand order the compiler picked for the scalar expression here (x86-64
// returns the destination register's): there only a NaN is required. The
// session's own runs (fp16 and capped) are compared bit for bit above.
bool same(uint16_t got, uint16_t want, uint16_t a, uint16_t b) {
  if (is_nan(a) && is_nan(b)) return is_nan(got);
  return got == want || ((want & 0x7fff) == 0x7e00 && (got & 0x7fff) == 0x7e00);
}

TEST(HalfBinary, Float16ArithmeticIsBitwiseTheFloatComputation) {
  std::vector<uint16_t> x(static_cast<size_t>(kN)), y(static_cast<size_t>(kN));
  uint32_t s = 0x9e3779b9u;
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = uint16_t(i);
    s = s * 1664525u + 1013904223u;
    y[i] = uint16_t(s >> 16);
  }
  // Specials on the second operand too.
  const uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x7bff, 0x7c00, 0xfc00, 0x7e01, 0x7c01};
  for (size_t i = 0; i < sizeof specials / 2; ++i) y[i * 4099 % size_t(kN)] = specials[i];

  const auto fast = run(x, y, std::nullopt);
  const auto capped = run(x, y, device::IsaLevel::kNeon);  // no fp16: widening
  ASSERT_EQ(fast.size(), 7u);
  ASSERT_EQ(capped.size(), 7u);
#if defined(__aarch64__)
  // One FP unit for the half and the float operations: the same NaN rules.
  EXPECT_EQ(fast, capped);
#endif
  std::cout << "[half binary] fp16 kernel "
            << (kernels::vec::half_binary_select() != nullptr ? "selected" : "not available")
            << "\n";
  for (size_t i = 0; i < x.size(); ++i) {
    const uint16_t a = x[i], b = y[i];
    const uint16_t want[7] = {add(a, b),       sub(a, b),       mul(a, b),         div(a, b),
                              mul(a, kScalar), sub(kScalar, b), mul(fast[0][i], b)};
    const uint16_t first[7] = {a, a, a, a, a, kScalar, fast[0][i]};
    for (size_t k = 0; k < 7; ++k) {
      const uint16_t second = k == 4 ? kScalar : b;
      // On x86-64 the capped (ref) and vectorised float kernels may return
      // either NaN where two meet, as the scalar expression above may.
      ASSERT_TRUE(same(fast[k][i], capped[k][i], first[k], second))
          << "output " << k << " element " << i << ": " << std::hex << fast[k][i] << " vs capped "
          << capped[k][i] << " (" << first[k] << ", " << second << ")";
      ASSERT_TRUE(same(fast[k][i], want[k], first[k], second))
          << "output " << k << " element " << i << ": " << std::hex << fast[k][i] << " vs "
          << want[k] << " (" << first[k] << ", " << second << ")";
    }
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
