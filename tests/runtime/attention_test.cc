// The attention family (issue 20): hostile inputs to RotaryEmbedding and
// GroupQueryAttention fail with an error naming the node, the rule and the
// values (never a crash, an out-of-bounds read or a huge allocation), small
// cases give the exact answer, and GroupQueryAttention run on a present buffer
// that IS its past buffer writes only the new rows; ONNX Attention-24's
// nonpad_kv_seqlen is checked (type, shape, range, no past) and masks the
// padding keys. Agreement with ONNX Runtime is tests/runtime/attention_vs_ort.py.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "runtime/ops/attention/attention_ops.h"
#include "runtime/session.h"
#include "testing/one_node_run.h"

namespace onnx_prepack::runtime {
namespace {

using testing::expect_error;
using testing::Fed;

// A one-node model; inputs are graph inputs, named "" to skip an optional one.
// One node of `domain`, with com.microsoft imported (testing::OneNodeModel).
struct OneNode : testing::OneNodeModel {
  OneNode(const std::string& op, const std::string& domain, int opset = 21)
      : OneNodeModel(op, "att", domain, opset, true, 10) {}
};

// Plans with every fed value pinned (total_sequence_length must be known), then runs.
Result<std::vector<HostTensor>> plan_and_run(const testing::OneNodeModel& model,
                                             const std::map<std::string, Fed>& feeds) {
  return testing::plan_and_run_model(model.m, feeds, /*pin_values=*/true);
}

std::vector<float> iota(size_t n, float scale = 0.01f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(float(i) * 0.37f) * scale * 100;
  return v;
}

// ---- GroupQueryAttention ----

// A GQA node: query [B, S, N*H], key / value [B, S, Nkv*H], past [B, Nkv, P, H] (P > 0),
// seqlens_k, total_sequence_length, optional caches.
struct Gqa {
  int64_t B = 1, S = 1, N = 2, Nkv = 1, H = 8, P = 0;
  int64_t cache_rows = 0, cache_half = 0;
  std::vector<float> q, k, v, pk, pv, cos, sin;
  std::vector<int32_t> seqlens;
  int32_t total = 1;
  OneNode model{"GroupQueryAttention", "com.microsoft"};

  Gqa(int64_t b, int64_t s, int64_t n, int64_t nkv, int64_t h, int64_t p)
      : B(b), S(s), N(n), Nkv(nkv), H(h), P(p) {}
  void build(bool with_attrs = true, int64_t bad_heads = 0) {
    model.input("q", kFloat, {B, S, N * H})
        .input("k", kFloat, {B, S, Nkv * H})
        .input("v", kFloat, {B, S, Nkv * H});
    if (P > 0)
      model.input("pk", kFloat, {B, Nkv, P, H}).input("pv", kFloat, {B, Nkv, P, H});
    else
      model.none().none();
    model.input("seqlens", kInt32, {B}).input("total", kInt32, {});
    if (cache_rows > 0)
      model.input("cos", kFloat, {cache_rows, cache_half})
          .input("sin", kFloat, {cache_rows, cache_half});
    model.output("out").output("present_k").output("present_v");
    if (with_attrs)
      model.attr_int("num_heads", bad_heads ? bad_heads : N).attr_int("kv_num_heads", Nkv);
    q = iota(size_t(B * S * N * H));
    k = iota(size_t(B * S * Nkv * H), 0.02f);
    v = iota(size_t(B * S * Nkv * H), 0.03f);
    pk = iota(size_t(B * Nkv * P * H), 0.04f);
    pv = iota(size_t(B * Nkv * P * H), 0.05f);
    cos.assign(size_t(cache_rows * cache_half), 1.0f);
    sin.assign(size_t(cache_rows * cache_half), 0.0f);
    if (seqlens.empty()) seqlens.assign(size_t(B), total - 1);
  }
  std::map<std::string, Fed> feeds() const {
    std::map<std::string, Fed> f = {{"q", {kFloat, {B, S, N * H}, q.data()}},
                                    {"k", {kFloat, {B, S, Nkv * H}, k.data()}},
                                    {"v", {kFloat, {B, S, Nkv * H}, v.data()}},
                                    {"seqlens", {kInt32, {B}, seqlens.data()}},
                                    {"total", {kInt32, {}, &total}}};
    if (P > 0) {
      f["pk"] = {kFloat, {B, Nkv, P, H}, pk.data()};
      f["pv"] = {kFloat, {B, Nkv, P, H}, pv.data()};
    }
    if (cache_rows > 0) {
      f["cos"] = {kFloat, {cache_rows, cache_half}, cos.data()};
      f["sin"] = {kFloat, {cache_rows, cache_half}, sin.data()};
    }
    return f;
  }
};

TEST(Attention, GqaHeadsThatDoNotDivideAreRefused) {
  Gqa g(1, 2, 3, 2, 8, 0);
  g.total = 2;
  g.build();
  expect_error(
      plan_and_run(g.model, g.feeds()),
      {"node 'att' (GroupQueryAttention)", "num_heads 3 is not a multiple of kv_num_heads 2"});
}

TEST(Attention, GqaMissingHeadsAndBadRanksAreRefused) {
  Gqa g(1, 2, 2, 1, 8, 0);
  g.total = 2;
  g.build(false);
  expect_error(plan_and_run(g.model, g.feeds()),
               {"num_heads (0) and kv_num_heads (0) must be > 0"});

  OneNode m("GroupQueryAttention", "com.microsoft");
  std::vector<float> q(16);
  std::vector<int32_t> sk = {0};
  int32_t total = 1;
  m.input("q", kFloat, {16})
      .none()
      .none()
      .none()
      .none()
      .input("seqlens", kInt32, {1})
      .input("total", kInt32, {});
  m.output("out").attr_int("num_heads", 2).attr_int("kv_num_heads", 1);
  expect_error(plan_and_run(m, {{"q", {kFloat, {16}, q.data()}},
                                {"seqlens", {kInt32, {1}, sk.data()}},
                                {"total", {kInt32, {}, &total}}}),
               {"query must be 3-D [batch, seq, hidden], got [16]"});
}

TEST(Attention, GqaSeqlensBeyondThePastBufferFailTheRun) {
  Gqa g(1, 1, 2, 1, 8, 4);  // decode step, past of 4 rows
  g.total = 5;
  g.seqlens = {40};  // claims 41 tokens
  g.build();
  expect_error(
      plan_and_run(g.model, g.feeds()),
      {"node 'att' (GroupQueryAttention)", "seqlens_k[0] = 40", "total_sequence_length - 1 = 4"});
  Gqa n(1, 1, 2, 1, 8, 4);
  n.total = 5;
  n.seqlens = {-7};
  n.build();
  expect_error(plan_and_run(n.model, n.feeds()), {"seqlens_k[0] = -7"});
}

TEST(Attention, GqaInconsistentTotalSequenceLengthIsRefused) {
  Gqa g(1, 3, 2, 1, 8, 4);
  g.total = 2;  // fewer than the 3 new tokens
  g.build();
  expect_error(plan_and_run(g.model, g.feeds()), {"total_sequence_length 2 must be in [sequence "
                                                  "length 3, past length + sequence length = 7]"});
  // A huge total: refused before any allocation.
  Gqa h(1, 1, 2, 1, 8, 4);
  h.total = 2147483647;
  h.build();
  expect_error(plan_and_run(h.model, h.feeds()), {"total_sequence_length 2147483647 must be in"});
  // A decode step without a past.
  Gqa d(1, 1, 2, 1, 8, 0);
  d.total = 3;
  d.build();
  expect_error(plan_and_run(d.model, d.feeds()),
               {"total_sequence_length 3 must be in [sequence length 1"});
}

TEST(Attention, GqaShortCosCacheIsRefused) {
  Gqa g(1, 4, 2, 1, 16, 0);
  g.total = 4;
  g.cache_rows = 3;
  g.cache_half = 8;
  g.build();
  g.model.attr_int("do_rotary", 1);
  expect_error(plan_and_run(g.model, g.feeds()),
               {"cos_cache has 3 rows, fewer than total_sequence_length 4"});
  Gqa w(1, 4, 2, 1, 16, 0);
  w.total = 4;
  w.cache_rows = 8;
  w.cache_half = 9;  // rotary dim 18 > head size 16
  w.build();
  w.model.attr_int("do_rotary", 1);
  expect_error(plan_and_run(w.model, w.feeds()), {"rotary dim 18", "head_size 16"});
}

TEST(Attention, GqaPositionIdsWithoutRotaryAreRefused) {
  Gqa g(1, 2, 2, 1, 8, 0);
  g.total = 2;
  g.build();
  g.model.n->add_input("");  // cos
  g.model.n->add_input("");  // sin
  g.model.input("pos", kInt64, {1, 2});
  std::vector<int64_t> pos = {0, 1};
  auto f = g.feeds();
  f["pos"] = {kInt64, {1, 2}, pos.data()};
  expect_error(plan_and_run(g.model, f), {"position_ids needs do_rotary = 1"});
}

TEST(Attention, GqaOneKeyGivesItsValue) {
  // A first prompt of one token: the output is the value, whatever the query.
  Gqa g(1, 1, 4, 2, 8, 0);
  g.total = 1;
  g.build();
  auto r = plan_and_run(g.model, g.feeds());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const float* out = (*r)[0].as<float>();
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t j = 0; j < 8; ++j) EXPECT_FLOAT_EQ(out[n * 8 + j], g.v[size_t((n / 2) * 8 + j)]);
  EXPECT_EQ((*r)[1].shape(), (Shape{1, 2, 1, 8}));
}

// Runs the GQA kernel directly: with `shared`, present_key / present_value ARE
// past_key / past_value (a generation loop's bound buffers).
struct DirectGqa {
  onnx::NodeProto node;
  std::vector<ValueDesc> descs;
  Tensor total_tensor;
  int32_t total;
  std::unique_ptr<Kernel> kernel;
  Shape present;

  DirectGqa(int64_t B, int64_t N, int64_t Nkv, int64_t H, int64_t P, int32_t tot,
            int32_t ft = kFloat)
      : total(tot) {
    node.set_op_type("GroupQueryAttention");
    node.set_domain("com.microsoft");
    node.set_name("direct");
    for (const char* i : {"q", "k", "v", "pk", "pv", "seqlens", "total"}) node.add_input(i);
    for (const char* o : {"out", "present_k", "present_v"}) node.add_output(o);
    auto* a = node.add_attribute();
    a->set_name("num_heads");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(N);
    a = node.add_attribute();
    a->set_name("kv_num_heads");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(Nkv);
    total_tensor = Tensor{kInt32, {}, &total};
    const Shape shapes[] = {
        {B, 1, N * H}, {B, 1, Nkv * H}, {B, 1, Nkv * H}, {B, Nkv, P, H}, {B, Nkv, P, H}, {B}, {}};
    const int32_t types[] = {ft, ft, ft, ft, ft, kInt32, kInt32};
    descs.resize(7);
    for (size_t i = 0; i < 7; ++i) {
      descs[i].dtype = types[i];
      descs[i].shape = shapes[i];
    }
    descs[6].value = &total_tensor;
  }
  Status build() {
    std::vector<const ValueDesc*> in;
    for (auto& d : descs) in.push_back(&d);
    BuildContext ctx(node, 21, in, nullptr);
    OP_ASSIGN_OR_RETURN(kernel, build_group_query_attention(ctx));
    present = ctx.outputs()[1].shape;
    return ok_status();
  }
};

TEST(Attention, GqaSharedBufferWritesOnlyTheNewRows) {
  const int64_t B = 2, N = 4, Nkv = 2, H = 16, P = 64;
  DirectGqa d(B, N, Nkv, H, P, 21);
  ASSERT_TRUE(d.build().ok());
  ASSERT_EQ(d.present, (Shape{B, Nkv, P, H}));  // max(total, past length)
  std::vector<float> q = iota(size_t(B * N * H)), k = iota(size_t(B * Nkv * H), 0.02f),
                     v = iota(size_t(B * Nkv * H), 0.03f);
  std::vector<int32_t> seqlens = {20, 12};  // batch 1 holds 13 tokens: its new row goes to row 12
  std::vector<float> past_k(size_t(B * Nkv * P * H)), past_v(past_k.size());
  for (size_t i = 0; i < past_k.size(); ++i) {
    past_k[i] = std::cos(float(i) * 0.11f);
    past_v[i] = std::sin(float(i) * 0.13f);
  }
  // Not shared: fresh present buffers (zeros past the valid rows).
  std::vector<float> out_a(size_t(B * N * H)), pk_a(past_k.size(), -1.0f),
      pv_a(past_k.size(), -1.0f);
  {
    void* in[] = {q.data(),      k.data(),       v.data(), past_k.data(),
                  past_v.data(), seqlens.data(), &d.total};
    void* out[] = {out_a.data(), pk_a.data(), pv_a.data()};
    Status st;
    KernelIO io{in, out, nullptr, nullptr, &st};
    d.kernel->run(io);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  // Shared: present is the past buffer.
  std::vector<float> sk = past_k, sv = past_v, out_b(out_a.size());
  {
    void* in[] = {q.data(), k.data(), v.data(), sk.data(), sv.data(), seqlens.data(), &d.total};
    void* out[] = {out_b.data(), sk.data(), sv.data()};
    Status st;
    KernelIO io{in, out, nullptr, nullptr, &st};
    d.kernel->run(io);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  EXPECT_EQ(out_a, out_b);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < Nkv; ++h) {
      for (int64_t r = 0; r < P; ++r) {
        for (int64_t j = 0; j < H; ++j) {
          const size_t i = size_t(((b * Nkv + h) * P + r) * H + j);
          const size_t nw = size_t((b * Nkv + h) * H + j);
          if (r == seqlens[size_t(b)]) {  // the new row, in both layouts
            ASSERT_EQ(sk[i], k[nw]);
            ASSERT_EQ(pk_a[i], k[nw]);
            ASSERT_EQ(sv[i], v[nw]);
          } else if (r < seqlens[size_t(b)]) {  // the past: kept / copied
            ASSERT_EQ(sk[i], past_k[i]);
            ASSERT_EQ(pk_a[i], past_k[i]);
          } else {  // beyond: untouched when shared, zero when not
            ASSERT_EQ(sk[i], past_k[i]);
            ASSERT_EQ(sv[i], past_v[i]);
            ASSERT_EQ(pk_a[i], 0.0f);
          }
        }
      }
    }
  }
}

TEST(Attention, GqaFloat16SharedBufferWritesOnlyTheNewRows) {
  const int64_t B = 1, N = 2, Nkv = 1, H = 8, P = 16;
  DirectGqa d(B, N, Nkv, H, P, 6, kFloat16);
  ASSERT_TRUE(d.build().ok());
  // float16 1.0 = 0x3C00, 2.0 = 0x4000: keys all 1 (equal scores), values 2 in the past.
  std::vector<uint16_t> q(size_t(B * N * H), 0x3C00), k(size_t(B * Nkv * H), 0x3C00),
      v(size_t(B * Nkv * H), 0x4400);  // new value 4.0
  std::vector<uint16_t> pk(size_t(B * Nkv * P * H), 0x3C00), pv(pk.size(), 0x4000);
  for (size_t i = size_t(6 * H); i < pk.size(); ++i) pk[i] = pv[i] = 0x7777;  // beyond: sentinel
  std::vector<int32_t> seqlens = {5};  // 5 past rows, the new one at row 5
  std::vector<uint16_t> out(size_t(B * N * H));
  void* in[] = {q.data(), k.data(), v.data(), pk.data(), pv.data(), seqlens.data(), &d.total};
  void* o[] = {out.data(), pk.data(), pv.data()};
  Status st;
  KernelIO io{in, o, nullptr, nullptr, &st};
  d.kernel->run(io);
  ASSERT_TRUE(st.ok()) << st.message();
  for (int64_t j = 0; j < H; ++j) {
    EXPECT_EQ(pv[size_t(5 * H + j)], 0x4400);  // the new row
    EXPECT_EQ(pv[size_t(6 * H + j)], 0x7777);  // untouched
    EXPECT_EQ(pk[size_t(6 * H + j)], 0x7777);
    EXPECT_EQ(pv[size_t(4 * H + j)], 0x4000);  // the past, kept
  }
  // Six equal scores: (5 x 2 + 4) / 6 = 2.3333 -> float16 0x40AB.
  for (uint16_t y : out) EXPECT_EQ(y, 0x40AB);
}

// ---- RotaryEmbedding ----

TEST(Attention, RotaryPositionIdsOutOfRangeFailTheRun) {
  OneNode m("RotaryEmbedding", "com.microsoft");
  m.input("x", kFloat, {1, 2, 16}).input("pos", kInt64, {1, 2}).input("cos", kFloat, {4, 8});
  m.input("sin", kFloat, {4, 8}).output("y");
  std::vector<float> x = iota(32), c(32, 1.0f), s(32, 0.0f);
  for (int64_t bad : {int64_t(4), int64_t(-1), int64_t(1) << 62}) {
    std::vector<int64_t> pos = {0, bad};
    expect_error(plan_and_run(m, {{"x", {kFloat, {1, 2, 16}, x.data()}},
                                  {"pos", {kInt64, {1, 2}, pos.data()}},
                                  {"cos", {kFloat, {4, 8}, c.data()}},
                                  {"sin", {kFloat, {4, 8}, s.data()}}}),
                 {"node 'att' (RotaryEmbedding)", "position id " + std::to_string(bad),
                  "4 rows of cos_cache"});
  }
  // An offset whose last position passes the cache.
  OneNode o("RotaryEmbedding", "com.microsoft");
  o.input("x", kFloat, {1, 2, 16}).input("pos", kInt64, {1}).input("cos", kFloat, {4, 8});
  o.input("sin", kFloat, {4, 8}).output("y");
  std::vector<int64_t> off = {3};
  expect_error(plan_and_run(o, {{"x", {kFloat, {1, 2, 16}, x.data()}},
                                {"pos", {kInt64, {1}, off.data()}},
                                {"cos", {kFloat, {4, 8}, c.data()}},
                                {"sin", {kFloat, {4, 8}, s.data()}}}),
               {"position id 4 (offset 3 + sequence length - 1)"});
  // In range with cos 1, sin 0: the identity.
  std::vector<int64_t> good = {0, 3};
  auto r = plan_and_run(m, {{"x", {kFloat, {1, 2, 16}, x.data()}},
                            {"pos", {kInt64, {1, 2}, good.data()}},
                            {"cos", {kFloat, {4, 8}, c.data()}},
                            {"sin", {kFloat, {4, 8}, s.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(std::vector<float>((*r)[0].as<float>(), (*r)[0].as<float>() + 32), x);
}

TEST(Attention, RotaryQuarterTurn) {
  // cos 0, sin 1 rotates each pair (a, b) to (-b, a).
  OneNode m("RotaryEmbedding", "", 23);
  m.input("x", kFloat, {1, 1, 1, 4})
      .input("cos", kFloat, {1, 1, 2})
      .input("sin", kFloat, {1, 1, 2});
  m.output("y").attr_int("interleaved", 1);
  std::vector<float> x = {1, 2, 3, 4}, c = {0, 0}, s = {1, 1};
  auto r = plan_and_run(m, {{"x", {kFloat, {1, 1, 1, 4}, x.data()}},
                            {"cos", {kFloat, {1, 1, 2}, c.data()}},
                            {"sin", {kFloat, {1, 1, 2}, s.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(std::vector<float>((*r)[0].as<float>(), (*r)[0].as<float>() + 4),
            (std::vector<float>{-2, 1, -4, 3}));
}

TEST(Attention, RotaryBadShapesAreRefused) {
  std::vector<float> x(48), c(64), s(64);
  std::vector<int64_t> pos(3);
  {
    OneNode m("RotaryEmbedding", "", 23);  // 3-D without num_heads
    m.input("x", kFloat, {1, 3, 16}).input("cos", kFloat, {8, 8}).input("sin", kFloat, {8, 8});
    m.input("pos", kInt64, {1, 3}).output("y");
    expect_error(plan_and_run(m, {{"x", {kFloat, {1, 3, 16}, x.data()}},
                                  {"cos", {kFloat, {8, 8}, c.data()}},
                                  {"sin", {kFloat, {8, 8}, s.data()}},
                                  {"pos", {kInt64, {1, 3}, pos.data()}}}),
                 {"a 3-D input needs the num_heads attribute"});
  }
  {
    OneNode m("RotaryEmbedding", "", 23);  // hidden 16 over 3 heads
    m.input("x", kFloat, {1, 3, 16}).input("cos", kFloat, {8, 8}).input("sin", kFloat, {8, 8});
    m.input("pos", kInt64, {1, 3}).output("y").attr_int("num_heads", 3);
    expect_error(plan_and_run(m, {{"x", {kFloat, {1, 3, 16}, x.data()}},
                                  {"cos", {kFloat, {8, 8}, c.data()}},
                                  {"sin", {kFloat, {8, 8}, s.data()}},
                                  {"pos", {kInt64, {1, 3}, pos.data()}}}),
                 {"hidden size 16 is not a multiple of num_heads 3"});
  }
  {
    OneNode m("RotaryEmbedding", "com.microsoft");  // rank 2
    m.input("x", kFloat, {3, 16}).input("pos", kInt64, {1, 3}).input("cos", kFloat, {8, 8});
    m.input("sin", kFloat, {8, 8}).output("y");
    expect_error(plan_and_run(m, {{"x", {kFloat, {3, 16}, x.data()}},
                                  {"pos", {kInt64, {1, 3}, pos.data()}},
                                  {"cos", {kFloat, {8, 8}, c.data()}},
                                  {"sin", {kFloat, {8, 8}, s.data()}}}),
                 {"input must be 3-D", "got [3, 16]"});
  }
  {
    OneNode m("RotaryEmbedding", "com.microsoft");  // rotary dim wider than the head
    m.input("x", kFloat, {1, 3, 16}).input("pos", kInt64, {1, 3}).input("cos", kFloat, {8, 8});
    m.input("sin", kFloat, {8, 8})
        .output("y")
        .attr_int("num_heads", 2)
        .attr_int("rotary_embedding_dim", 16);
    expect_error(plan_and_run(m, {{"x", {kFloat, {1, 3, 16}, x.data()}},
                                  {"pos", {kInt64, {1, 3}, pos.data()}},
                                  {"cos", {kFloat, {8, 8}, c.data()}},
                                  {"sin", {kFloat, {8, 8}, s.data()}}}),
                 {"rotary_embedding_dim 16 must be even and <= head_size 8"});
  }
}

// ---- MultiHeadAttention, com.microsoft Attention, ONNX Attention ----

TEST(Attention, MhaKeyLengthOutOfRangeFailsTheRun) {
  OneNode m("MultiHeadAttention", "com.microsoft");
  m.input("q", kFloat, {2, 3, 16}).input("k", kFloat, {2, 4, 16}).input("v", kFloat, {2, 4, 16});
  m.none().input("kpm", kInt32, {2}).output("y").attr_int("num_heads", 2);
  std::vector<float> q = iota(96), k = iota(128), v = iota(128);
  std::vector<int32_t> bad = {4, 5};
  expect_error(plan_and_run(m, {{"q", {kFloat, {2, 3, 16}, q.data()}},
                                {"k", {kFloat, {2, 4, 16}, k.data()}},
                                {"v", {kFloat, {2, 4, 16}, v.data()}},
                                {"kpm", {kInt32, {2}, bad.data()}}}),
               {"node 'att' (MultiHeadAttention)", "mask[1] = 5 is not a key position in [0, 4]"});
  // Key length 1: every query sees only key 0, so the output is value row 0.
  std::vector<int32_t> one = {1, 1};
  auto r = plan_and_run(m, {{"q", {kFloat, {2, 3, 16}, q.data()}},
                            {"k", {kFloat, {2, 4, 16}, k.data()}},
                            {"v", {kFloat, {2, 4, 16}, v.data()}},
                            {"kpm", {kInt32, {2}, one.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const float* y = (*r)[0].as<float>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t s = 0; s < 3; ++s)
      for (int64_t j = 0; j < 16; ++j)
        EXPECT_NEAR(y[(b * 3 + s) * 16 + j], v[size_t(b * 4 * 16 + j)], 1e-6f);
}

TEST(Attention, MhaPackedFormsAndBadShapesAreRefused) {
  std::vector<float> q(2 * 3 * 2 * 3 * 8);
  {
    OneNode m("MultiHeadAttention", "com.microsoft");
    m.input("q", kFloat, {2, 3, 2, 3, 8}).output("y").attr_int("num_heads", 2);
    expect_error(plan_and_run(m, {{"q", {kFloat, {2, 3, 2, 3, 8}, q.data()}}}),
                 {"packed QKV [B, S, N, 3, H] is not supported"});
  }
  {
    OneNode m("MultiHeadAttention", "com.microsoft");
    m.input("q", kFloat, {2, 3, 16}).input("k", kFloat, {2, 4, 24}).input("v", kFloat, {2, 4, 16});
    m.output("y").attr_int("num_heads", 2);
    expect_error(plan_and_run(m, {{"q", {kFloat, {2, 3, 16}, q.data()}},
                                  {"k", {kFloat, {2, 4, 24}, q.data()}},
                                  {"v", {kFloat, {2, 4, 16}, q.data()}}}),
                 {"key [2, 4, 24] / value [2, 4, 16] must be [batch, kv_seq, hidden]"});
  }
}

TEST(Attention, BertAttentionHostileMaskAndSizes) {
  std::vector<float> x = iota(2 * 3 * 8), w = iota(8 * 48), bias(48, 0.0f);
  {
    OneNode m("Attention", "com.microsoft");
    m.input("x", kFloat, {2, 3, 8}).input("w", kFloat, {8, 48}).input("b", kFloat, {48});
    m.input("mask", kInt32, {4}).output("y").attr_int("num_heads", 2);
    std::vector<int32_t> mask = {3, 3, 0, 9};  // ends, then a start past the keys
    expect_error(plan_and_run(m, {{"x", {kFloat, {2, 3, 8}, x.data()}},
                                  {"w", {kFloat, {8, 48}, w.data()}},
                                  {"b", {kFloat, {48}, bias.data()}},
                                  {"mask", {kInt32, {4}, mask.data()}}}),
                 {"node 'att' (Attention)", "mask[3] = 9 is not a key position in [0, 3]"});
  }
  {
    OneNode m("Attention", "com.microsoft");
    m.input("x", kFloat, {2, 3, 8})
        .input("w", kFloat, {8, 48})
        .output("y")
        .attr_int("num_heads", 3);
    expect_error(
        plan_and_run(m, {{"x", {kFloat, {2, 3, 8}, x.data()}}, {"w", {kFloat, {8, 48}, w.data()}}}),
        {"must be positive multiples of num_heads 3"});
  }
}

TEST(Attention, OnnxAttentionRulesAreChecked) {
  std::vector<float> q = iota(2 * 3 * 4 * 8), k = iota(2 * 3 * 5 * 8);
  {
    OneNode m("Attention", "", 23);  // 3 q heads over 2 kv heads
    m.input("q", kFloat, {2, 3, 4, 8})
        .input("k", kFloat, {2, 2, 5, 8})
        .input("v", kFloat, {2, 2, 5, 8});
    m.output("y");
    expect_error(plan_and_run(m, {{"q", {kFloat, {2, 3, 4, 8}, q.data()}},
                                  {"k", {kFloat, {2, 2, 5, 8}, k.data()}},
                                  {"v", {kFloat, {2, 2, 5, 8}, k.data()}}}),
                 {"node 'att' (Attention)", "q heads 3 must be a positive multiple of kv heads 2"});
  }
  {
    OneNode m("Attention", "", 23);  // a mask over 4 keys where there are 5
    m.input("q", kFloat, {2, 3, 4, 8})
        .input("k", kFloat, {2, 3, 5, 8})
        .input("v", kFloat, {2, 3, 5, 8});
    m.input("m", kFloat, {4, 4}).output("y");
    std::vector<float> mask(16);
    expect_error(plan_and_run(m, {{"q", {kFloat, {2, 3, 4, 8}, q.data()}},
                                  {"k", {kFloat, {2, 3, 5, 8}, k.data()}},
                                  {"v", {kFloat, {2, 3, 5, 8}, k.data()}},
                                  {"m", {kFloat, {4, 4}, mask.data()}}}),
                 {"attn_mask [4, 4] must broadcast to [2, 3, 4, 5]"});
  }
  {
    OneNode m("Attention", "", 21);  // not an operator before opset 23
    m.input("q", kFloat, {2, 3, 4, 8})
        .input("k", kFloat, {2, 3, 5, 8})
        .input("v", kFloat, {2, 3, 5, 8});
    m.output("y");
    expect_error(plan_and_run(m, {{"q", {kFloat, {2, 3, 4, 8}, q.data()}},
                                  {"k", {kFloat, {2, 3, 5, 8}, k.data()}},
                                  {"v", {kFloat, {2, 3, 5, 8}, k.data()}}}),
                 {"Attention is an operator of opset 23 and later"});
  }
}

// ---- ONNX Attention-24: nonpad_kv_seqlen ----

// A 4-D Attention node at `opset`: Q [B, N, S, H], K / V [B, N, T, H], nonpad_kv_seqlen
// (input 6, `np_type` [np_len]) unless np_len < 0, past [B, N, P, H] when P > 0.
struct Att24 {
  int64_t B = 2, N = 2, S = 3, T = 5, H = 4, P = 0;
  std::vector<float> q, k, v, pk, pv;
  std::vector<int64_t> nonpad;
  OneNode model;
  Att24(int opset, bool causal, int64_t np_len = 2, int32_t np_type = kInt64, int64_t p = 0)
      : P(p), model("Attention", "", opset) {
    model.input("q", kFloat, {B, N, S, H}).input("k", kFloat, {B, N, T, H});
    model.input("v", kFloat, {B, N, T, H}).none();
    if (P > 0)
      model.input("pk", kFloat, {B, N, P, H}).input("pv", kFloat, {B, N, P, H});
    else
      model.none().none();
    if (np_len >= 0) model.input("np", np_type, {np_len});
    model.output("y");
    if (causal) model.attr_int("is_causal", 1);
    q = iota(size_t(B * N * S * H));
    k = iota(size_t(B * N * T * H), 0.02f);
    v = iota(size_t(B * N * T * H), 0.03f);
    pk = iota(size_t(B * N * P * H), 0.04f);
    pv = pk;
  }
  std::map<std::string, Fed> feeds(int32_t np_type = kInt64, int64_t np_len = 2) const {
    std::map<std::string, Fed> f = {{"q", {kFloat, {B, N, S, H}, q.data()}},
                                    {"k", {kFloat, {B, N, T, H}, k.data()}},
                                    {"v", {kFloat, {B, N, T, H}, v.data()}}};
    if (np_len >= 0) f["np"] = {np_type, {np_len}, nonpad.data()};
    if (P > 0) {
      f["pk"] = {kFloat, {B, N, P, H}, pk.data()};
      f["pv"] = {kFloat, {B, N, P, H}, pv.data()};
    }
    return f;
  }
};

TEST(Attention, Onnx24NonpadOutOfRangeFailsTheRun) {
  for (int64_t bad : {int64_t(6), int64_t(-1), int64_t(1) << 62}) {
    Att24 a(24, true);
    a.nonpad = {3, bad};
    expect_error(plan_and_run(a.model, a.feeds()),
                 {"node 'att' (Attention)", "nonpad_kv_seqlen[1] = " + std::to_string(bad),
                  "outside [0, kv_sequence_length = 5]"});
  }
}

TEST(Attention, Onnx24NonpadBadInputsAreRefused) {
  {
    Att24 a(24, false, 3);  // [3] for a batch of 2
    a.nonpad = {1, 2, 3};
    expect_error(plan_and_run(a.model, a.feeds(kInt64, 3)),
                 {"nonpad_kv_seqlen int64 [3] must be int64 [batch] = [2]"});
  }
  {
    Att24 a(24, false, 2, kInt32);
    std::vector<int32_t> np32 = {1, 2};
    auto f = a.feeds(kInt64, -1);
    f["np"] = {kInt32, {2}, np32.data()};
    expect_error(plan_and_run(a.model, f), {"nonpad_kv_seqlen int32 [2] must be int64"});
  }
  {
    Att24 a(24, true, 2, kInt64, /*past=*/2);
    a.nonpad = {1, 2};
    expect_error(plan_and_run(a.model, a.feeds()),
                 {"nonpad_kv_seqlen", "cannot be used with past_key / past_value"});
  }
  {
    Att24 a(23, false);  // input 6 does not exist at opset 23
    a.nonpad = {1, 2};
    expect_error(plan_and_run(a.model, a.feeds()),
                 {"at most 6 inputs at opset 23", "nonpad_kv_seqlen is input 6 from opset 24"});
  }
}

TEST(Attention, Onnx24NonpadMasksThePaddingKeys) {
  // nonpad 1 (not causal): every query of batch 0 attends key 0 only: Y = V row 0.
  // Causal, nonpad 2 with S = 3 (offset -1): row 0 sees no key (zeros), row 1 key 0,
  // row 2 keys 0 and 1.
  for (bool causal : {false, true}) {
    Att24 a(24, causal);
    a.nonpad = {causal ? 2 : 1, 5};
    auto r = plan_and_run(a.model, a.feeds());
    ASSERT_TRUE(r.ok()) << r.status().message();
    const float* y = (*r)[0].as<float>();
    for (int64_t n = 0; n < a.N; ++n) {
      const float* vn = a.v.data() + n * a.T * a.H;  // batch 0, head n
      for (int64_t s = 0; s < a.S; ++s) {
        for (int64_t j = 0; j < a.H; ++j) {
          const float got = y[(n * a.S + s) * a.H + j];
          if (!causal || s == 1) {
            EXPECT_FLOAT_EQ(got, vn[j]) << "n " << n << " s " << s;
          } else if (s == 0) {
            EXPECT_EQ(got, 0.0f) << "a row that sees no key gives zeros";
          }
        }
      }
    }
  }
  // nonpad = kv length is the opset-23 answer (with is_causal, offset T - S).
  Att24 a(24, false);
  a.nonpad = {5, 5};
  Att24 b(24, false, -1);
  auto ra = plan_and_run(a.model, a.feeds());
  auto rb = plan_and_run(b.model, b.feeds(kInt64, -1));
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_EQ(testing::values<float>((*ra)[0]), testing::values<float>((*rb)[0]));
}

}  // namespace
}  // namespace onnx_prepack::runtime
