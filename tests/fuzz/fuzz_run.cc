// libFuzzer target: a whole run of a small fuzzed graph under a memory budget.
// The input is a ModelProto; it is parsed, checked, planned with every graph
// input fed (symbolic dims as 1, small deterministic values) and run. Any
// crash, UB, leak, bad_alloc or allocation past the budget is a bug: a bad
// graph must end in an error. It is planned and run with and without
// elementwise fusion, and the outputs must be the same bytes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "format/model.h"
#include "fuzz_common.h"
#include "runtime/session.h"

using namespace onnx_prepack;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Every tensor is checked against it before allocation (runtime/tensor.h).
  ::setenv("ONNX_PREPACK_MEMORY_BUDGET", "64M", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = format::Model::parse({data, size}, "/nonexistent-onnx-prepack-fuzz");
  if (!parsed.ok()) return 0;
  std::shared_ptr<format::Model> model(std::move(*parsed));
  if (model->proto().graph().node_size() > 64) return 0;  // small graphs: time per input
  // Operators whose outputs are random by design: no two runs compare.
  for (const auto& n : model->proto().graph().node()) {
    if (n.op_type().rfind("Random", 0) == 0 || n.op_type() == "Multinomial" ||
        n.op_type() == "Bernoulli")
      return 0;
  }
  // Planned and run twice, with and without elementwise fusion: the outputs
  // must be the same bytes (runtime/pointwise_fusion.h promises bitwise equality).
  std::vector<runtime::HostTensor> outputs[2];
  for (int fuse = 1; fuse >= 0; --fuse) {
    runtime::SessionOptions options;
    options.fuse_pointwise = fuse == 1;
    auto session = runtime::Session::create(model, options);
    if (!session.ok()) return 0;
    std::map<std::string, runtime::HostTensor> values;
    std::map<std::string, runtime::Session::Feed> feeds;
    uint64_t fed_bytes = 0;
    for (const runtime::GraphInput& in : (*session)->inputs()) {
      if (in.has_initializer) continue;
      runtime::Shape shape;
      for (int64_t d : in.dims) shape.push_back(d < 0 ? 1 : std::min<int64_t>(d, 64));
      auto t = runtime::HostTensor::try_allocate(in.dtype, shape, in.name);
      if (!t.ok() || runtime::dtype_size(in.dtype) == 0) return 0;
      fed_bytes += t->nbytes();
      if (fed_bytes > (uint64_t(1) << 24)) return 0;
      auto* bytes = static_cast<uint8_t*>(t->mutable_data());
      for (size_t i = 0; i < t->nbytes(); ++i)
        bytes[i] = uint8_t(i * 7 % 3);  // 0, 1, 2 (2 is a true BOOL)
      feeds[in.name] = {in.dtype, shape, nullptr};
      values.emplace(in.name, std::move(*t));
    }
    std::map<std::string, runtime::Tensor> inputs;
    for (auto& [name, t] : values) inputs[name] = t.view();
    auto planned = (*session)->plan(feeds);
    if (planned.ok() && *planned == runtime::PlanOutcome::kNeedsInputValues) {
      for (auto& [name, f] : feeds) f.value = &inputs[name];
      planned = (*session)->plan(feeds);
    }
    if (!planned.ok() || *planned != runtime::PlanOutcome::kPlanned) return 0;
    auto outs = (*session)->run(inputs);
    if (!outs.ok()) return 0;
    outputs[fuse] = std::move(*outs);
  }
  if (outputs[0].size() != outputs[1].size()) std::abort();
  for (size_t i = 0; i < outputs[0].size(); ++i) {
    const runtime::HostTensor &a = outputs[0][i], &b = outputs[1][i];
    if (a.nbytes() != b.nbytes() || (a.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()))) {
      std::fprintf(stderr, "fuzz_run: output %zu differs with and without elementwise fusion\n", i);
      std::abort();
    }
  }
  return 0;
}
