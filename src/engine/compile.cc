// compile_model: the pipeline of `onnx-prepack compile` (docs/cli.md). Every
// eligible MatMul/Gemm B is hashed, described as one compiled_tensors entry
// per target, and packed while the output is written (one payload in memory
// at a time).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "device/device_match.h"
#include "digest/canonical_tensor.h"
#include "digest/digest.h"
#include "engine/engine_options.h"
#include "format/metadata.h"
#include "format/model.h"
#include "format/model_writer.h"
#include "onnx_prepack/engine.hpp"
#include "pack/pack_family.h"
#include "resolve/lineage.h"
#include "resolve/memo_store.h"
#include "resolve/payload_check.h"
#include "runtime/qdq_fusion.h"

namespace onnx_prepack {
namespace {

// Records the digests just computed against the output file's identity, so a
// later `--verify memo` load hashes nothing (format.md §7.2). A record taken within
// the timestamp granularity of the file's last change is never trusted, and
// the output was just written: wait out that window before taking identities.
// `payloads` maps each payload_digest written (hex) to H(payload), what a memo
// record of the payload's range holds (resolve/payload_check.h).
Status record_memo(const std::string& output, const std::string& memo_dir,
                   digest::Algorithm algorithm,
                   const std::vector<std::pair<std::string, digest::Digest>>& hashed,
                   const std::map<std::string, digest::Digest>& payloads) {
  OP_ASSIGN_OR_RETURN(auto out, format::Model::load(output));
  resolve::MemoStore store(memo_dir.empty() ? resolve::MemoStore::default_dir() : memo_dir);
  for (const auto& [name, d] : hashed) {
    const int index = out->initializer_index(name);
    if (index < 0) continue;
    OP_ASSIGN_OR_RETURN(resolve::MemoKey key, store.key_for(*out, index, algorithm));
    const int64_t changed = std::max(key.file.mtime_ns, key.file.ctime_ns);
    const int64_t wait_ns = changed + store.granularity_ns(key) - key.stat_time_ns;
    if (wait_ns > 0) {
      ::usleep(useconds_t(wait_ns / 1000 + 1000));
      OP_ASSIGN_OR_RETURN(key, store.key_for(*out, index, algorithm));
    }
    OP_RETURN_IF_ERROR(store.record(key, d));
  }
  // Payloads too (format.md §4.6): a memo load of the output then hashes nothing.
  for (int i = 0; i < out->proto().compiled_tensors_size(); ++i) {
    Result<resolve::PayloadMemo> pm = resolve::payload_memo_for(*out, i);
    if (!pm.ok()) continue;
    auto inner = payloads.find(pm->recorded);
    if (inner == payloads.end()) continue;
    const int64_t changed = std::max(pm->key.file.mtime_ns, pm->key.file.ctime_ns);
    const int64_t wait_ns = changed + store.granularity_ns(pm->key) - pm->key.stat_time_ns;
    if (wait_ns > 0) {
      ::usleep(useconds_t(wait_ns / 1000 + 1000));
      OP_ASSIGN_OR_RETURN(pm, resolve::payload_memo_for(*out, i));
    }
    OP_RETURN_IF_ERROR(store.record(pm->key, inner->second));
  }
  return ok_status();
}

// Constant nodes with a tensor `value` become initializers named like their output.
int lift_constants(onnx::ModelProto& m) {
  auto* g = m.mutable_graph();
  std::set<std::string> taken;
  for (const auto& t : g->initializer()) taken.insert(t.name());
  for (const auto& i : g->input()) taken.insert(i.name());
  int lifted = 0;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (auto& node : *g->mutable_node()) {
    const onnx::AttributeProto* value = nullptr;
    if (node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx") &&
        node.output_size() == 1 && node.attribute_size() == 1 &&
        node.attribute(0).name() == "value" && node.attribute(0).has_t() &&
        !taken.count(node.output(0))) {
      value = &node.attribute(0);
    }
    if (value == nullptr) {
      *kept.Add() = std::move(node);
      continue;
    }
    onnx::TensorProto t = value->t();
    t.set_name(node.output(0));
    taken.insert(node.output(0));
    *g->add_initializer() = std::move(t);
    ++lifted;
  }
  g->mutable_node()->Swap(&kept);
  return lifted;
}

// Constant nodes left in the graph (not lifted): their weights are never packed.
int constant_nodes(const onnx::GraphProto& g) {
  int n = 0;
  for (const auto& node : g.node()) n += node.op_type() == "Constant" ? 1 : 0;
  return n;
}

// Weights no family packs yet that users expect packed, so that compile says
// so instead of writing nothing silently: FLOAT16 weights no family takes
// (LSTM, GRU, RNN: the runtime computes such nodes on a widened copy; FLOAT16
// MatMul/Gemm B and Conv/ConvTranspose W have _f16 formats) and weights of
// nodes inside If/Loop/Scan bodies (compiled entries address main-graph
// initializers only; docs/decisions.md).
void unpacked_weights(const format::Model& model, std::vector<SkippedWeight>& out) {
  static const std::set<std::string> kOps = {"MatMul",        "Gemm",        "Conv",
                                             "ConvTranspose", "LSTM",        "GRU",
                                             "RNN",           "MatMulNBits", "MatMulInteger"};
  pack::for_each_scoped_node(model.proto().graph(), [&](const pack::ScopedNode& sn) {
    const onnx::NodeProto& n = *sn.node;
    if (!kOps.count(n.op_type()) || n.input_size() < 2) return;
    const std::string& w = n.input(1);
    if (sn.body_initializers->count(w)) {
      out.push_back({w, "", n.op_type(),
                     "an initializer of an If/Loop/Scan body: not packed (entries address "
                     "main-graph initializers; docs/decisions.md)"});
      return;
    }
    if (sn.shadowed->count(w)) return;  // a value the body computes or takes in
    const onnx::TensorProto* t = model.find_initializer(w);
    if (t != nullptr && t->data_type() == onnx::TensorProto::FLOAT16 &&
        pack::family_for(n, 1, t->data_type(),
                         std::vector<int64_t>(t->dims().begin(), t->dims().end())) == nullptr) {
      out.push_back({w, "", n.op_type(),
                     "FLOAT16 weight: not packed (the runtime computes FLOAT16 nodes on a widened "
                     "copy)"});
    }
  });
}

// Targets -> architecture strings of our formats (any family's), deduplicated,
// in order: a target names the most demanding format architecture it runs.
Result<std::vector<std::string>> target_architectures(const std::vector<std::string>& targets) {
  std::map<std::string, device::IsaLevel> known;  // architecture -> its kernels' level
  for (const pack::PackFamily* family : pack::pack_families()) {
    for (const pack::FormatInfo& f : family->formats())
      known.emplace(std::string(f.architecture), f.isa);
  }
  auto best_for = [&](const device::HostDescription& h) {
    std::string arch;
    for (const auto& [a, isa] : known) {
      if (device::match_architecture(a, h).ok() && (arch.empty() || isa > known[arch])) arch = a;
    }
    return arch;
  };
  // A machine no family has a format for yet (aarch64): its targets stand, in canonical
  // form, and compile lists every weight as not packed for them, family by family.
  auto formatless = [](const device::HostDescription& h) {
    for (const pack::PackFamily* family : pack::pack_families()) {
      if (pack::has_machine_formats(*family, h.architecture.machine)) return std::string();
    }
    return h.architecture.to_string();
  };
  std::vector<std::string> archs;
  for (const std::string& t : targets.empty() ? std::vector<std::string>{"host"} : targets) {
    std::string arch;
    if (t == "host") {
      const device::HostDescription h = device::HostDescription::detect();
      arch = best_for(h);
      if (arch.empty()) arch = formatless(h);
    } else if (known.count(t)) {
      arch = t;
    } else if (auto pretended = device::HostDescription::pretend(t); pretended.ok()) {
      // Any format.md §6 architecture string (psABI levels too: x86_64-v3, x86_64-v4-avx512vnni).
      arch = best_for(*pretended);
      if (arch.empty()) arch = formatless(*pretended);
    }
    if (arch.empty()) {
      std::string list;
      for (const auto& [a, isa] : known) list += (list.empty() ? "" : ", ") + a;
      return invalid_argument("--target '" + t +
                              "' has no packed format, expected host or one of " + list);
    }
    if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
  }
  return archs;
}

// A compile target: its architecture as a host, and the level of the kernels
// that read its formats (an architecture string names required features only,
// not a whole CPU).
struct CompileTarget {
  std::string arch;
  device::HostDescription host;
  device::IsaLevel level = device::IsaLevel::kRef;
};

Result<std::vector<CompileTarget>> compile_targets(const std::vector<std::string>& archs) {
  std::vector<CompileTarget> out;
  for (const std::string& arch : archs) {
    auto host = device::HostDescription::pretend(arch);
    if (!host.ok()) return host.status().with_context("--target " + arch);
    CompileTarget t{arch, std::move(*host), device::IsaLevel::kRef};
    for (const pack::PackFamily* family : pack::pack_families()) {
      for (const pack::FormatInfo& f : family->formats()) {
        if (f.architecture == arch) t.level = std::max(t.level, f.isa);
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

// A payload packed while the output is written.
struct PendingPayload {
  std::function<Status(std::span<uint8_t>)> pack;
  std::string context;
  std::string name;
  uint64_t size;
};

// The compile of one model: the entries it adds and the payloads to pack.
class Compiler {
 public:
  Compiler(format::Model& model, digest::Algorithm algorithm, std::vector<CompileTarget> targets,
           base::ThreadPool* pool)
      : model_(model),
        out_(model.proto()),
        algorithm_(algorithm),
        targets_(std::move(targets)),
        pool_(pool),
        content_(pack::model_content(model)) {
    for (int i = 0; i < out_.struct_types_size(); ++i) type_index_[out_.struct_types(i).name()] = i;
    // Recompiling a compiled model (in place too): reuse its devices, so the new
    // entries replace the old ones of the same key instead of adding duplicates.
    for (int i = 0; i < out_.devices_size(); ++i) {
      const onnx::DeviceProto& d = out_.devices(i);
      if (d.type() == "cpu" && !d.has_index() && d.metadata_props_size() == 0 &&
          d.runtime() == device::kRuntimeName &&
          d.runtime_version() == device::kPackingAbiVersion) {
        device_index_.emplace(d.architecture(), i);
      }
    }
  }

  // One entry per target for a weight use, in the best format a consumer at
  // that target's level reads; a use that cannot be packed is listed in `skipped`.
  Status add(const pack::ModelWeightUse& u);
  // An entry with its type, device and payload.
  void add_entry(onnx::CompiledTensorProto entry, const onnx::StructTypeProto& type,
                 const std::string& arch, uint64_t bytes,
                 std::function<Status(std::span<uint8_t>)> pack);
  // Puts the new entries in place of the ones they would duplicate.
  void merge_entries();
  Result<format::WriteReport> write(const std::string& dst, const CompileOptions& options);

  uint64_t payload_bytes = 0;
  size_t entries = 0;
  std::vector<SkippedWeight> skipped;
  std::vector<std::pair<std::string, digest::Digest>> hashed;
  std::map<std::string, digest::Digest> payload_inner;  // payload_digest hex -> H(payload)

 private:
  int device_for(const std::string& arch);

  format::Model& model_;
  onnx::ModelProto& out_;
  digest::Algorithm algorithm_;
  std::vector<CompileTarget> targets_;
  base::ThreadPool* pool_;
  std::map<std::string, int> type_index_, device_index_;
  std::vector<onnx::CompiledTensorProto> compiled_;
  std::vector<PendingPayload> pending_;  // parallel to `compiled_`
  // Canonical sources (copies of typed fields, unaligned raw bytes live until written).
  pack::ContentFn content_;
  std::map<std::string, digest::Digest> digests_;  // per source, hashed once
};

int Compiler::device_for(const std::string& arch) {
  if (!device_index_.count(arch)) {
    device_index_[arch] = out_.devices_size();
    auto* d = out_.add_devices();
    d->set_type("cpu");
    d->set_architecture(arch);
    d->set_runtime(std::string(device::kRuntimeName));
    d->set_runtime_version(std::string(device::kPackingAbiVersion));
  }
  return device_index_[arch];
}

Status Compiler::add(const pack::ModelWeightUse& u) {
  const pack::WeightUse& use = u.use;
  auto skip = [&](std::string why) {
    skipped.push_back(
        {use.source, std::string(u.family->name()), u.family->label(use), std::move(why)});
    return ok_status();
  };
  if (u.duplicated) return skip("several initializers have this name");
  std::vector<std::pair<std::string, pack::PackPlan>> plans;  // (architecture, plan)
  std::string no_machine;  // targets of a machine this family has no format for
  for (const CompileTarget& target : targets_) {
    const device::Machine m = target.host.architecture.machine;
    if (!pack::has_machine_formats(*u.family, m)) {
      no_machine += (no_machine.empty() ? "" : "; ") +
                    pack::no_machine_format_message(*u.family, m) + " (--target " + target.arch +
                    ")";
      continue;
    }
    for (const pack::FormatInfo& f : u.family->accepted(use, target.level)) {
      if (!device::match_architecture(f.architecture, target.host).ok()) continue;
      bool done = false;
      for (const auto& [a, p] : plans) done = done || p.format.name == f.name;
      if (done) break;  // a baseline format serves several targets with one entry
      auto plan = u.family->plan(use, f, content_, pool_);
      if (!plan.ok()) return skip(plan.status().message());
      plans.emplace_back(std::string(f.architecture), std::move(*plan));
      break;
    }
  }
  if (plans.empty()) return skip(no_machine.empty() ? "no format for the targets" : no_machine);
  // Packed for some targets: the others are still listed, so that no target is left silently.
  if (!no_machine.empty()) (void)skip(no_machine);
  const int index = model_.initializer_index(use.source);
  if (!digests_.count(use.source)) {
    const std::string ctx = format::tensor_context(index, use.source);
    OP_ASSIGN_OR_RETURN(auto dg, digest::digest_tensor(model_, *model_.find_initializer(use.source),
                                                       ctx, {algorithm_, pool_}));
    digests_[use.source] = dg.digest;
    hashed.emplace_back(use.source, dg.digest);
  }
  const digest::Digest& dg = digests_[use.source];
  std::vector<std::pair<std::string, std::string>> props;
  if (auto lineage = u.family->lineage(use)) {
    OP_ASSIGN_OR_RETURN(props, resolve::lineage_props(*lineage, model_, algorithm_));
    // Every lineage source's digest too, for the memo (format.md §7.2: verify policies cover them).
    for (const auto& [role, name] : lineage->roles) {
      if (name.empty() || digests_.count(name)) continue;
      const onnx::TensorProto* t = model_.find_initializer(name);
      if (t == nullptr) continue;
      OP_ASSIGN_OR_RETURN(
          auto d, digest::digest_tensor(
                      model_, *t, format::tensor_context(model_.initializer_index(name), name),
                      {algorithm_, pool_}));
      digests_[name] = d.digest;
      hashed.emplace_back(name, d.digest);
    }
  }
  for (auto& [arch, plan] : plans) {
    onnx::CompiledTensorProto ct;
    ct.set_source_name(use.source);
    ct.set_source_digest(dg.data(), dg.size());
    ct.set_digest_algorithm(std::string(digest::algorithm_name(algorithm_)));
    for (uint64_t d : plan.dims) ct.mutable_value()->add_dims(d);
    for (const auto& [k, v] : props) {
      auto* m = ct.add_metadata_props();
      m->set_key(k);
      m->set_value(v);
    }
    add_entry(std::move(ct), plan.type, arch, plan.payload_bytes, std::move(plan.pack));
  }
  return ok_status();
}

void Compiler::add_entry(onnx::CompiledTensorProto entry, const onnx::StructTypeProto& type,
                         const std::string& arch, uint64_t bytes,
                         std::function<Status(std::span<uint8_t>)> pack) {
  if (!type_index_.count(type.name())) {
    type_index_[type.name()] = out_.struct_types_size();
    *out_.add_struct_types() = type;
  }
  entry.set_device(device_for(arch));
  entry.mutable_value()->set_type(type_index_[type.name()]);
  const std::string name = entry.source_name();
  pending_.push_back({std::move(pack), name, name, bytes});
  payload_bytes += bytes;
  compiled_.push_back(std::move(entry));
  ++entries;
}

void Compiler::merge_entries() {
  // (source, device, type) keys must stay unique.
  std::set<std::tuple<std::string, int, int>> keys;
  for (const auto& ct : compiled_) keys.insert({ct.source_name(), ct.device(), ct.value().type()});
  google::protobuf::RepeatedPtrField<onnx::CompiledTensorProto> kept;
  for (auto& ct : *out_.mutable_compiled_tensors()) {
    if (!ct.value().has_struct_type() &&
        keys.count({ct.source_name(), ct.device(), ct.value().type()}))
      continue;
    *kept.Add() = std::move(ct);
  }
  for (auto& ct : compiled_) *kept.Add() = std::move(ct);
  out_.mutable_compiled_tensors()->Swap(&kept);
}

Result<format::WriteReport> Compiler::write(const std::string& dst, const CompileOptions& options) {
  format::WriteOptions wo;
  wo.payload_threshold = 0;
  wo.alignment = 4096;
  const int first_new = out_.compiled_tensors_size() - int(pending_.size());
  const auto& progress = options.progress;
  for (size_t k = 0; k < pending_.size(); ++k) {
    const PendingPayload* p = &pending_[k];
    const size_t total = pending_.size();
    wo.lazy_payloads[first_new + int(k)] = {
        p->size, [p, k, total, &progress](std::span<uint8_t> dst) -> Status {
          if (progress) progress(k, total, "packing " + p->name);
          return p->pack(dst).with_context(p->context);
        }};
  }
  // format.md §4.6: every payload written records its digest; entries whose old
  // payload is gone or truncated are replaced, not fatal; the data file gets a
  // fresh name and the model is published last.
  onnx::ModelProto& out = out_;
  base::ThreadPool* pool = pool_;
  std::map<std::string, digest::Digest>& inner = payload_inner;
  wo.on_payload = [&out, &inner, pool, first_new](int i, std::span<const uint8_t> payload) {
    auto* ct = out.mutable_compiled_tensors(i);
    auto recorded = [ct] {
      return format::metadata_value(ct->metadata_props(), resolve::kPayloadDigestKey);
    };
    if (i < first_new) {
      std::optional<digest::Digest> d;
      if (!resolve::copied_payload_intact(out, *ct, payload, pool, &d)) return false;
      if (d) inner[recorded()] = *d;
      return true;
    }
    const onnx::StructTypeProto* type = resolve::entry_struct_type(out, *ct);
    if (auto alg = digest::algorithm_from_name(ct->digest_algorithm()); alg && type) {
      const digest::Digest d = resolve::set_payload_digest(*ct, *type, *alg, payload, pool);
      inner[recorded()] = d;
    }
    return true;
  };
  wo.drop_unreadable_payloads = true;
  wo.fresh_data_file = true;
  wo.reference_existing_external = options.reference_source_data;
  const size_t total = pending_.size();
  if (progress)
    wo.on_phase = [&progress, total](const std::string& p) { progress(total, total, p); };
  return format::write_model(out_, dst, wo, &model_);
}

// The uses `run --qdq integer` makes of QDQ weights: W as B of the integer
// node each unit becomes (runtime/qdq_fusion.h), one per source not already
// a use of that family; `units` keeps the nodes the uses point to.
// Transposed units (Gemm transB 1) are packed at plan time.
void add_qdq_integer_uses(const format::Model& model, std::vector<runtime::QdqUnit>& units,
                          std::vector<pack::ModelWeightUse>& uses) {
  const onnx::GraphProto& g = model.proto().graph();
  std::set<std::string> inputs;
  for (const auto& i : g.input()) inputs.insert(i.name());
  std::map<std::string, int> count;
  for (const auto& t : g.initializer()) ++count[t.name()];
  auto constant = [&](const std::string& name) -> std::optional<runtime::ConstantInfo> {
    if (inputs.count(name) || count[name] != 1) return std::nullopt;
    for (const auto& t : g.initializer()) {
      if (t.name() == name)
        return runtime::ConstantInfo{t.data_type(),
                                     std::vector<int64_t>(t.dims().begin(), t.dims().end())};
    }
    return std::nullopt;
  };
  units = runtime::find_qdq_units(g, constant);
  for (const runtime::QdqUnit& u : units) {
    if (u.transposed) continue;
    const std::string& w = u.integer_node.input(u.weight_input);
    const std::optional<runtime::ConstantInfo> info = constant(w);
    pack::ModelWeightUse m;
    m.family = pack::family_for(u.integer_node, u.weight_input, info->dtype, info->dims);
    if (m.family == nullptr) continue;
    m.use.source = w;
    m.use.consumer =
        u.integer_node.name().empty() ? u.integer_node.op_type() : u.integer_node.name();
    m.use.node = &u.integer_node;
    m.use.input = u.weight_input;
    m.use.data_type = info->dtype;
    m.use.dims = info->dims;
    m.use.model = &model;
    const bool known = std::any_of(uses.begin(), uses.end(), [&](const pack::ModelWeightUse& o) {
      return o.family == m.family && o.use.source == w &&
             o.family->use_key(o.use) == m.family->use_key(m.use);
    });
    if (!known) uses.push_back(std::move(m));
  }
}

}  // namespace

Result<CompileSummary> compile_model(const std::string& src, const std::string& dst,
                                     const CompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto algorithm = digest::algorithm_from_name(options.digest);
  if (!algorithm) {
    return invalid_argument("--digest '" + options.digest +
                            "' is not known, expected blake3 or sha256");
  }
  if (options.threads > kMaxThreads) {
    return invalid_argument("threads " + std::to_string(options.threads) +
                            " is above the limit of " + std::to_string(kMaxThreads));
  }
  OP_ASSIGN_OR_RETURN(std::vector<std::string> archs, target_architectures(options.targets));
  OP_ASSIGN_OR_RETURN(std::unique_ptr<format::Model> model, format::Model::load(src));
  CompileSummary summary;
  if (options.lift_constants) {
    onnx::ModelProto copy = model->proto();
    summary.lifted = lift_constants(copy);
    model = format::Model::from_proto(std::move(copy), model->base_dir());
  }
  std::unique_ptr<base::ThreadPool> own_pool;
  base::ThreadPool* pool = engine::pool_for(options.threads, own_pool);
  std::vector<pack::ModelWeightUse> uses = pack::model_weight_uses(*model);
  std::vector<runtime::QdqUnit> qdq_units;  // the nodes of the QDQ uses
  if (options.qdq == QdqMode::kInteger) add_qdq_integer_uses(*model, qdq_units, uses);
  OP_ASSIGN_OR_RETURN(std::vector<CompileTarget> targets, compile_targets(archs));
  Compiler compiler(*model, *algorithm, std::move(targets), pool);
  for (const pack::ModelWeightUse& u : uses) {
    if (options.progress)
      options.progress(size_t(&u - uses.data()), uses.size(), "hashing " + u.use.source);
    OP_RETURN_IF_ERROR(compiler.add(u));
  }
  compiler.merge_entries();
  OP_ASSIGN_OR_RETURN(format::WriteReport written, compiler.write(dst, options));
  if (options.memo) {
    if (options.progress) options.progress(compiler.entries, compiler.entries, "recording memo");
    // The output is complete either way; a memo that cannot be written only costs a hash later.
    Status st =
        record_memo(dst, options.memo_dir, *algorithm, compiler.hashed, compiler.payload_inner);
    if (!st.ok()) summary.memo_error = st.message();
  }
  if (options.progress) options.progress(compiler.entries, compiler.entries, "");
  summary.entries = compiler.entries;
  summary.weights = uses.size();
  summary.skipped = compiler.skipped;
  unpacked_weights(*model, summary.skipped);
  summary.constant_nodes = options.lift_constants ? 0 : constant_nodes(model->proto().graph());
  summary.payload_bytes = compiler.payload_bytes;
  summary.targets = archs;
  summary.output = dst;
  summary.data_file = written.data_file;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return summary;
}

}  // namespace onnx_prepack
