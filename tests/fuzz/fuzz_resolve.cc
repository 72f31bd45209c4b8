// libFuzzer target: the resolver with payload loading. A fixed valid model
// gets fuzzed devices, struct_types and compiled_tensors (the first part of the
// input, a ModelProto) and a fuzzed payload file (the rest, "p.data" beside
// the model); the model is then planned and run with resolved weights under
// every verification policy. Whatever the entries say, the run must end in a
// hit, a miss or an error, and under `full` a hit must give the outputs of the
// plain run (format.md §4.6: invalid compiled data never changes results).
//
// Seeds: ONNX_PREPACK_FUZZ_SEED=COMPILED.onnx:OUT turns a model compiled from
// the fixed model (`fixed.onnx`, written to ONNX_PREPACK_FUZZ_FIXED=PATH) into
// an input. tests/fuzz/make_seeds.sh does both.
#include <cstdlib>
#include <cstring>
#include <map>

#include "base/thread_pool.h"
#include "device/device_match.h"
#include "format/model.h"
#include "fuzz_common.h"
#include "resolve/resolver.h"
#include "runtime/prepared_weights.h"
#include "runtime/session.h"

using namespace onnx_prepack;

namespace {

// Runs the model with plain or resolved weights; outputs, or nothing on error.
std::optional<std::vector<runtime::HostTensor>> run(std::shared_ptr<format::Model> model,
                                                    std::optional<resolve::VerifyPolicy> policy) {
  static base::ThreadPool pool{2};
  runtime::SessionOptions so;
  std::unique_ptr<resolve::Resolver> resolver;
  std::unique_ptr<runtime::ResolvedWeights> weights;
  if (policy) {
    resolve::ResolverOptions ro;
    ro.verify = *policy;
    ro.memo_dir = fuzz::scratch_dir() + "/memo";
    ro.pool = &pool;
    resolver = std::make_unique<resolve::Resolver>(*model, device::HostDescription::detect(), ro);
    weights =
        std::make_unique<runtime::ResolvedWeights>(resolver.get(), device::host_isa_level(), &pool);
    so.weights = weights.get();
  }
  auto session = runtime::Session::create(model, so);
  if (!session.ok()) return std::nullopt;
  runtime::HostTensor x = runtime::HostTensor::allocate(runtime::kFloat, {1, 16});
  for (int i = 0; i < 16; ++i) static_cast<float*>(x.mutable_data())[i] = float(i % 5) - 2.0f;
  std::map<std::string, runtime::Session::Feed> feeds{{"x", {runtime::kFloat, {1, 16}, nullptr}}};
  if (!(*session)->plan(feeds).ok()) return std::nullopt;
  if (weights) weights->populate_hits(&pool);
  auto outs = (*session)->run({{"x", x.view()}});
  if (!outs.ok()) return std::nullopt;
  return std::move(*outs);
}

bool same(const std::vector<runtime::HostTensor>& a, const std::vector<runtime::HostTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].nbytes() != b[i].nbytes() ||
        std::memcmp(a[i].data(), b[i].data(), a[i].nbytes()) != 0) {
      return false;
    }
  }
  return true;
}

void make_seed(const std::string& spec) {
  const auto colon = spec.find(':');
  auto compiled = format::Model::load(spec.substr(0, colon));
  if (!compiled.ok()) std::abort();
  onnx::ModelProto part;
  *part.mutable_devices() = (*compiled)->proto().devices();
  *part.mutable_struct_types() = (*compiled)->proto().struct_types();
  *part.mutable_compiled_tensors() = (*compiled)->proto().compiled_tensors();
  std::string data;
  for (auto& ct : *part.mutable_compiled_tensors()) {
    for (auto& kv : *ct.mutable_value()->mutable_external_data()) {
      if (kv.key() == "location") {
        auto file = base::MappedFile::open((*compiled)->base_dir() + "/" + kv.value());
        if (!file.ok()) std::abort();
        data.assign(reinterpret_cast<const char*>((*file)->bytes().data()),
                    (*file)->bytes().size());
        kv.set_value("p.data");
      }
    }
  }
  const std::string msg = part.SerializeAsString();
  std::string input(4, '\0');
  const uint32_t n = uint32_t(msg.size());
  std::memcpy(input.data(), &n, 4);
  input += msg + data;
  fuzz::write_file(spec.substr(colon + 1),
                   {reinterpret_cast<const uint8_t*>(input.data()), input.size()});
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("ONNX_PREPACK_MEMORY_BUDGET", "256M", 1);
  if (const char* p = std::getenv("ONNX_PREPACK_FUZZ_FIXED")) {
    const std::string bytes = fuzz::fixed_model().SerializeAsString();
    fuzz::write_file(p, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
    std::exit(0);
  }
  if (const char* s = std::getenv("ONNX_PREPACK_FUZZ_SEED")) {
    make_seed(s);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<runtime::HostTensor> plain = [] {
    auto m = format::Model::from_proto(fuzz::fixed_model(), fuzz::scratch_dir());
    auto outs = run(std::shared_ptr<format::Model>(std::move(m)), std::nullopt);
    if (!outs) std::abort();
    return std::move(*outs);
  }();
  const fuzz::TwoParts parts = fuzz::split(data, size);
  onnx::ModelProto extra;
  if (!extra.ParseFromArray(parts.first.data(), int(parts.first.size()))) return 0;
  if (extra.compiled_tensors_size() > 64 || extra.struct_types_size() > 64) return 0;
  onnx::ModelProto proto = fuzz::fixed_model();
  *proto.mutable_devices() = extra.devices();
  *proto.mutable_struct_types() = extra.struct_types();
  *proto.mutable_compiled_tensors() = extra.compiled_tensors();
  // A fresh file per input (new inode), so memo records of another input never apply.
  const std::string dir = fuzz::scratch_dir();
  ::unlink((dir + "/p.data").c_str());
  fuzz::write_file(dir + "/p.data", parts.rest);
  std::shared_ptr<format::Model> model(format::Model::from_proto(std::move(proto), dir));
  for (auto policy :
       {resolve::VerifyPolicy::kFull, resolve::VerifyPolicy::kMemo, resolve::VerifyPolicy::kOff}) {
    auto outs = run(model, policy);
    // Verified policies: a run that completes gives the plain outputs.
    if (outs && policy != resolve::VerifyPolicy::kOff && !same(*outs, plain)) __builtin_trap();
  }
  return 0;
}
