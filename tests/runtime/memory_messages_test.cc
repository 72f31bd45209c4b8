// Memory budget refusals name what was being allocated (issue 18): the node,
// its op, the bytes and the budget. Each test fills the process-wide account
// (runtime/memory_account.h) to a little under the budget with a reservation,
// so that the next allocation of the plan is refused, then checks its message.
#include <gtest/gtest.h>

#include <new>
#include <string>
#include <vector>

#include "runtime/activity.h"
#include "runtime/memory_account.h"
#include "runtime/session.h"
#include "testing/plan_status.h"

namespace onnx_prepack::runtime {
namespace {

// Holds all of the budget but `slack` bytes while it lives.
MemoryReservation fill_budget(uint64_t slack) {
  auto r = reserve_memory(memory_budget_bytes() - memory_in_use() - slack, "test filler");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(*r);
}

onnx::ModelProto graph_model(int opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

void add_input(onnx::GraphProto* g, const std::string& name, int32_t dtype, const Shape& shape) {
  auto* in = g->add_input();
  in->set_name(name);
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                          const std::vector<std::string>& in, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

void add_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void add_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

Result<std::unique_ptr<Session>> planned(const onnx::ModelProto& m,
                                         const std::map<std::string, Session::Feed>& feeds) {
  auto fm = std::shared_ptr<const format::Model>(format::Model::from_proto(m, "."));
  OP_ASSIGN_OR_RETURN(auto s, Session::create(fm, {}));
  OP_RETURN_IF_ERROR(testing::plan_status(s->plan(feeds)));
  return s;
}

void expect_parts(const Status& s, const std::vector<std::string>& parts) {
  ASSERT_FALSE(s.ok()) << "expected an error with '" << parts.front() << "'";
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.message();
  for (const auto& p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << s.message();
}

// TF-IDF over X [5] with the unigrams 1 and 2 and the bigram (1, 3), written
// to output columns 0, `far` and 1, weighted 1, 2 and 3.
onnx::ModelProto tfidf_model(int64_t far) {
  onnx::ModelProto m = graph_model(9);
  auto* g = m.mutable_graph();
  add_input(g, "X", kInt64, {5});
  auto* n = add_node(g, "TfIdfVectorizer", "tf", {"X"}, "Y");
  g->add_output()->set_name("Y");
  add_int(n, "min_gram_length", 1);
  add_int(n, "max_gram_length", 2);
  add_int(n, "max_skip_count", 0);
  auto* mode = n->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("TFIDF");
  add_ints(n, "ngram_counts", {0, 2});
  add_ints(n, "ngram_indexes", {0, far, 1});
  add_ints(n, "pool_int64s", {1, 2, 1, 3});
  auto* w = n->add_attribute();
  w->set_name("weights");
  w->set_type(onnx::AttributeProto::FLOATS);
  for (float v : {1.0f, 2.0f, 3.0f}) w->add_floats(v);
  return m;
}

TEST(MemoryMessages, TfIdfWeightTableIsReservedBeforeItIsAllocated) {
  const onnx::ModelProto m = tfidf_model(1000);  // a table of 1001 floats, 4004 bytes
  const std::map<std::string, Session::Feed> feeds = {{"X", {kInt64, {5}, nullptr}}};
  {
    MemoryReservation filler = fill_budget(2000);
    auto s = planned(m, feeds);
    expect_parts(s.status(), {"node 'tf' (TfIdfVectorizer)", "weight table", "needs 4004 bytes",
                              "memory budget of " + std::to_string(memory_budget_bytes())});
  }
  // With the budget free again the same model runs: counts times weights.
  auto s = planned(m, feeds);
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<int64_t> x = {1, 2, 3, 1, 3};
  auto r = (*s)->run({{"X", Tensor{kInt64, {5}, x.data()}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const HostTensor& y = (*r)[0];
  ASSERT_EQ(y.shape(), (Shape{1001}));
  std::vector<float> want(1001, 0.0f);
  want[0] = 2 * 1.0f;     // unigram 1, twice
  want[1000] = 1 * 2.0f;  // unigram 2, once
  want[1] = 1 * 3.0f;     // the bigram (1, 3), once
  EXPECT_EQ(std::vector<float>(y.as<float>(), y.as<float>() + y.numel()), want);
}

TEST(MemoryMessages, ArenaRefusalNamesItsPeakNodeAndLargestValue) {
  onnx::ModelProto m = graph_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {1000});
  add_node(g, "Relu", "first", {"X"}, "a");
  add_node(g, "Neg", "second", {"a"}, "b");
  add_node(g, "Abs", "third", {"b"}, "Y");
  g->add_output()->set_name("Y");
  MemoryReservation filler = fill_budget(4096);  // a value of 1000 floats fits, the arena not
  auto s = planned(m, {{"X", {kFloat, {1000}, nullptr}}});
  expect_parts(s.status(), {"the arena of the graph's intermediate values", "needs ", "bytes",
                            "memory budget of " + std::to_string(memory_budget_bytes()),
                            "at node '", "values hold", "the largest '"});
}

TEST(MemoryMessages, FoldedConstantRefusalNamesTheNode) {
  onnx::ModelProto m = graph_model();
  auto* g = m.mutable_graph();
  auto* c = g->add_initializer();
  c->set_name("c");
  c->set_data_type(kFloat);
  c->add_dims(4096);  // 16 KiB: Neg of it is folded at plan time
  std::vector<float> v(4096, 1.0f);
  c->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  add_node(g, "Neg", "negate", {"c"}, "Y");
  g->add_output()->set_name("Y");
  MemoryReservation filler = fill_budget(1024);
  auto s = planned(m, {});
  expect_parts(s.status(), {"node 'negate' (Neg): folded output 'Y'", "needs 16384 bytes",
                            "memory budget of " + std::to_string(memory_budget_bytes())});
}

TEST(MemoryMessages, OutputCopyRefusalNamesTheNodeThatWroteIt) {
  onnx::ModelProto m = graph_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", kFloat, {1000});
  add_node(g, "Relu", "act", {"X"}, "Y");
  g->add_output()->set_name("Y");
  auto s = planned(m, {{"X", {kFloat, {1000}, nullptr}}});
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<float> x(1000, -1.0f);
  MemoryReservation filler = fill_budget(1024);  // the 4000-byte output copy does not fit
  auto r = (*s)->run({{"X", Tensor{kFloat, {1000}, x.data()}}});
  expect_parts(r.status(), {"node 'act' (Relu): output 'Y'", "needs 4032 bytes",
                            "memory budget of " + std::to_string(memory_budget_bytes())});
}

void add_scalar(onnx::GraphProto* g, const std::string& name, int32_t dtype, double v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  if (dtype == kInt64)
    t->add_int64_data(int64_t(v));
  else
    t->add_float_data(float(v));
}

// Plan-time tables sized by constants of the model (signal ops) are checked
// before they are allocated: a window of 2^20 doubles and a mel matrix of
// 2049 x 1024 doubles, with 1 MiB of the budget left.
TEST(MemoryMessages, SignalTablesFromConstantsAreCheckedBeforeAllocating) {
  onnx::ModelProto w = graph_model(17);
  add_scalar(w.mutable_graph(), "size", kInt64, double(1 << 20));
  add_int(add_node(w.mutable_graph(), "HannWindow", "window", {"size"}, "Y"), "output_datatype",
          kDouble);
  w.mutable_graph()->add_output()->set_name("Y");
  onnx::ModelProto mel = graph_model(17);
  auto* g = mel.mutable_graph();
  add_scalar(g, "mels", kInt64, 1024);
  add_scalar(g, "dft", kInt64, 4096);
  add_scalar(g, "rate", kInt64, 16000);
  add_scalar(g, "lo", kFloat, 20);
  add_scalar(g, "hi", kFloat, 8000);
  add_node(g, "MelWeightMatrix", "mel", {"mels", "dft", "rate", "lo", "hi"}, "Y");
  g->add_output()->set_name("Y");
  MemoryReservation filler = fill_budget(1 << 20);
  expect_parts(planned(w, {}).status(),
               {"node 'window' (HannWindow): output", "needs 8388608 bytes",
                "memory budget of " + std::to_string(memory_budget_bytes())});
  expect_parts(
      planned(mel, {}).status(),
      {"node 'mel' (MelWeightMatrix): mel table", "needs " + std::to_string(2049 * 1024 * 8),
       "memory budget of " + std::to_string(memory_budget_bytes())});
}

TEST(MemoryMessages, BadAllocNamesTheActivityItUnwoundThrough) {
  onnx::NodeProto outer, inner;
  outer.set_name("loop");
  outer.set_op_type("Loop");
  inner.set_name("mm");
  inner.set_op_type("MatMul");
  try {
    const ActivityNote a("planning", outer);
    const ActivityNote b("running", inner);
    throw std::bad_alloc();
  } catch (const std::bad_alloc&) {
    const std::string msg = out_of_memory_message();
    // The innermost activity, then the budget.
    EXPECT_NE(msg.find("out of memory while running node 'mm' (MatMul)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(memory budget " + std::to_string(memory_budget_bytes()) + " bytes)"),
              std::string::npos)
        << msg;
  }
  // Taken once; a scope that ends normally leaves no note.
  EXPECT_EQ(take_activity(), "");
  { const ActivityNote c("planning", outer); }
  EXPECT_EQ(take_activity(), "");
  EXPECT_EQ(out_of_memory_message().find(" while "), std::string::npos);
}

}  // namespace
}  // namespace onnx_prepack::runtime
