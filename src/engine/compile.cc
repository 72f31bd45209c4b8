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
#include "pack/conv_filter_format.h"
#include "pack/conv_filter_weights.h"
#include "pack/format_list.h"
#include "pack/gemm_b_weights.h"
#include "pack/q_gemm_b.h"
#include "resolve/memo_store.h"
#include "resolve/payload_check.h"

namespace onnx_prepack {
namespace {

using kernels::PackSourceLayout;

// Records the digests just computed against the output file's identity, so a
// later `--verify memo` load hashes nothing (SPEC 7.2). A record taken within
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
  // Payloads too (SPEC 4.6): a memo load of the output then hashes nothing.
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

// One weight to pack in one layout (a B may feed several consumers).
struct Job {
  std::string source;
  PackSourceLayout layout;
  int64_t conv_group = 0;        // > 0: a Conv filter of a node with this group
  bool conv_transposed = false;  // a ConvTranspose filter
};

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

// The weights pack::gemm_b_weights lists, except those a fed graph input could
// override or whose name is ambiguous: entries for them could never hit.
std::vector<Job> eligible(const format::Model& model) {
  std::vector<Job> jobs;
  for (const pack::GemmBWeight& w : pack::gemm_b_weights(model)) {
    if (!w.graph_input && w.initializers == 1) jobs.push_back({w.name, w.layout});
  }
  for (const pack::ConvFilterWeight& w : pack::conv_filter_weights(model)) {
    if (!w.graph_input && w.initializers == 1)
      jobs.push_back({w.name, PackSourceLayout::kKN, w.group, w.transposed});
  }
  return jobs;
}

// The canonical content of an initializer: in place for raw/external data,
// else converted (typed fields) without the digest header.
Result<std::vector<uint8_t>> typed_content(const format::Model& model, const onnx::TensorProto& t,
                                           const std::string& ctx) {
  digest::VectorSink sink;
  OP_ASSIGN_OR_RETURN(uint64_t n, digest::write_canonical_tensor(model, t, ctx, sink));
  const auto& all = sink.bytes();
  return std::vector<uint8_t>(all.end() - ptrdiff_t(n), all.end());
}

// Targets -> architecture strings of our formats, deduplicated, in order.
Result<std::vector<std::string>> target_architectures(const std::vector<std::string>& targets) {
  std::set<std::string> known_arch;
  for (const pack::GemmBFormat* f : pack::gemm_b_formats())
    known_arch.insert(std::string(f->architecture));
  std::vector<std::string> archs;
  for (const std::string& t : targets.empty() ? std::vector<std::string>{"host"} : targets) {
    std::string arch = t;
    if (t == "host") {
      if (device::host_isa_level() == device::IsaLevel::kRef) {
        return invalid_argument(
            "--target host: this host has no architecture with a packed format");
      }
      arch =
          std::string(pack::gemm_b_runtime_format(PackSourceLayout::kKN, onnx::TensorProto::FLOAT,
                                                  device::host_isa_level())
                          ->architecture);
    } else if (!known_arch.count(t)) {
      // Any SPEC 6 architecture string (psABI levels too: x86_64-v3, x86_64-v4-avx512vnni):
      // the best format whose required features that target has.
      if (auto pretended = device::HostDescription::pretend(t); pretended.ok()) {
        for (const pack::GemmBFormat* f : pack::gemm_b_formats()) {
          if (device::match_architecture(f->architecture, *pretended).ok()) {
            arch = std::string(f->architecture);
            break;
          }
        }
      }
    }
    if (!known_arch.count(arch)) {
      std::string list;
      for (const auto& a : known_arch) list += (list.empty() ? "" : ", ") + a;
      return invalid_argument("--target '" + t +
                              "' has no packed format, expected host or one of " + list);
    }
    if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
  }
  return archs;
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
  Compiler(format::Model& model, digest::Algorithm algorithm, std::vector<std::string> archs,
           base::ThreadPool* pool)
      : model_(model),
        out_(model.proto()),
        algorithm_(algorithm),
        archs_(std::move(archs)),
        pool_(pool) {
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

  Status add(const Job& job);
  Status add_conv(const Job& job, const onnx::TensorProto& t, const std::string& ctx,
                  std::span<const uint8_t> content, const digest::Digest& digest);
  // An entry a pack family other than gemm_b built (its type, device and payload).
  void add_entry(onnx::CompiledTensorProto entry, const onnx::StructTypeProto& type,
                 const std::string& arch, uint64_t bytes,
                 std::function<Status(std::span<uint8_t>)> pack);
  // Puts the new entries in place of the ones they would duplicate.
  void merge_entries();
  Result<format::WriteReport> write(const std::string& dst, const CompileOptions& options);

  uint64_t payload_bytes = 0;
  size_t entries = 0;
  std::vector<std::pair<std::string, digest::Digest>> hashed;
  std::map<std::string, digest::Digest> payload_inner;  // payload_digest hex -> H(payload)

 private:
  Result<std::span<const uint8_t>> content_of(const onnx::TensorProto& t, const std::string& ctx);
  int device_for(const std::string& arch);
  int type_for(const pack::GemmBFormat& f);

  format::Model& model_;
  onnx::ModelProto& out_;
  digest::Algorithm algorithm_;
  std::vector<std::string> archs_;
  base::ThreadPool* pool_;
  std::map<std::string, int> type_index_, device_index_;
  std::vector<onnx::CompiledTensorProto> compiled_;
  std::vector<PendingPayload> pending_;  // parallel to `compiled_`
  // Copied sources (typed fields, unaligned raw bytes) stay alive until written.
  std::vector<std::shared_ptr<std::vector<uint32_t>>> keep_alive_;
};

Result<std::span<const uint8_t>> Compiler::content_of(const onnx::TensorProto& t,
                                                      const std::string& ctx) {
  std::span<const uint8_t> content;
  std::vector<uint8_t> converted;
  auto tb = model_.tensor_bytes(t, ctx);
  if (tb.ok() &&
      (tb->storage == format::Storage::kRaw || tb->storage == format::Storage::kExternal)) {
    content = tb->bytes;
    // Raw bytes inside a protobuf string may be unaligned for float loads.
    if (reinterpret_cast<uintptr_t>(content.data()) % 4 == 0) return content;
  } else {
    OP_ASSIGN_OR_RETURN(converted, typed_content(model_, t, ctx));
    content = converted;
  }
  auto copy = std::make_shared<std::vector<uint32_t>>((content.size() + 3) / 4);
  if (!content.empty()) std::memcpy(copy->data(), content.data(), content.size());
  keep_alive_.push_back(copy);
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(copy->data()), content.size());
}

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

int Compiler::type_for(const pack::GemmBFormat& f) {
  const std::string name(f.name);
  if (!type_index_.count(name)) {
    type_index_[name] = out_.struct_types_size();
    *out_.add_struct_types() = pack::gemm_b_struct_type(f);
  }
  return type_index_[name];
}

Status Compiler::add(const Job& job) {
  const onnx::TensorProto& t = *model_.find_initializer(job.source);
  const std::string ctx = format::tensor_context(model_.initializer_index(job.source), t.name());
  OP_ASSIGN_OR_RETURN(auto dg, digest::digest_tensor(model_, t, ctx, {algorithm_, pool_}));
  hashed.emplace_back(job.source, dg.digest);
  OP_ASSIGN_OR_RETURN(std::span<const uint8_t> content, content_of(t, ctx));
  if (job.conv_group > 0) return add_conv(job, t, ctx, content, dg.digest);
  auto src = pack::gemm_b_source(
      content, t.data_type(), std::span<const int64_t>(t.dims().data(), t.dims_size()), job.layout);
  if (!src.ok()) return src.status().with_context(ctx);
  for (const std::string& arch : archs_) {
    for (const pack::GemmBFormat* f : pack::gemm_b_formats()) {
      if (f->architecture != arch || f->layout != job.layout || f->source_type != t.data_type())
        continue;
      const int type = type_for(*f);
      const int device = device_for(arch);
      const uint64_t payload_size = pack::gemm_b_payload_bytes(*f, src->k, src->n);
      base::ThreadPool* pool = pool_;
      pending_.push_back({[f, s = *src, pool](std::span<uint8_t> dst) {
                            return pack::gemm_b_pack(*f, s, dst, pool);
                          },
                          ctx, job.source, payload_size});
      onnx::CompiledTensorProto ct;
      ct.set_source_name(job.source);
      ct.set_device(device);
      ct.set_source_digest(dg.digest.data(), dg.digest.size());
      ct.set_digest_algorithm(std::string(digest::algorithm_name(algorithm_)));
      auto* v = ct.mutable_value();
      v->set_type(type);
      for (uint64_t d : pack::gemm_b_dims(*f, src->k, src->n)) v->add_dims(d);
      payload_bytes += payload_size;
      compiled_.push_back(std::move(ct));
      ++entries;
      break;
    }
  }
  return ok_status();
}

// A Conv or ConvTranspose filter: one entry per target whose kernel has a format for its shape.
Status Compiler::add_conv(const Job& job, const onnx::TensorProto& t, const std::string& ctx,
                          std::span<const uint8_t> content, const digest::Digest& digest) {
  const std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  auto cs =
      pack::conv_filter_source(content, t.data_type(), dims, job.conv_group, job.conv_transposed);
  if (!cs.ok()) return cs.status().with_context(ctx);
  for (const std::string& arch : archs_) {
    for (const pack::ConvFilterFormat* f : pack::conv_filter_formats_for(
             dims, job.conv_group, device::IsaLevel::kAvx512, job.conv_transposed)) {
      if (f->architecture != arch) continue;
      onnx::CompiledTensorProto ct;
      ct.set_source_name(job.source);
      ct.set_source_digest(digest.data(), digest.size());
      ct.set_digest_algorithm(std::string(digest::algorithm_name(algorithm_)));
      for (uint64_t d : pack::conv_filter_dims(*f, *cs)) ct.mutable_value()->add_dims(d);
      add_entry(std::move(ct), pack::conv_filter_struct_type(*f), arch,
                pack::conv_filter_payload_bytes(*f, *cs), [f, s = *cs](std::span<uint8_t> dst) {
                  return pack::conv_filter_pack(*f, s, dst);
                });
      break;
    }
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
          if (progress) progress(k, total, p->name);
          return p->pack(dst).with_context(p->context);
        }};
  }
  // SPEC 4.6: every payload written records its digest; entries whose old
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
  auto written = format::write_model(out_, dst, wo, &model_);
  if (progress) progress(pending_.size(), pending_.size(), "");
  return written;
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
  const std::vector<Job> jobs = eligible(*model);
  Compiler compiler(*model, *algorithm, archs, pool);
  for (const Job& job : jobs) OP_RETURN_IF_ERROR(compiler.add(job));
  // MatMulNBits weights, each with its lineage (pack/q_gemm_b.h).
  OP_ASSIGN_OR_RETURN(std::vector<pack::QGemmBEntry> qentries,
                      pack::q_gemm_b_entries(*model, *algorithm, pool));
  for (pack::QGemmBEntry& q : qentries) {
    compiler.hashed.insert(compiler.hashed.end(), q.digests.begin(), q.digests.end());
    compiler.add_entry(std::move(q.entry), q.type, q.architecture, q.payload_bytes,
                       std::move(q.pack));
  }
  compiler.merge_entries();
  OP_ASSIGN_OR_RETURN(format::WriteReport written, compiler.write(dst, options));
  if (options.memo) {
    // The output is complete either way; a memo that cannot be written only costs a hash later.
    Status st =
        record_memo(dst, options.memo_dir, *algorithm, compiler.hashed, compiler.payload_inner);
    if (!st.ok()) summary.memo_error = st.message();
  }
  summary.entries = compiler.entries;
  summary.weights = jobs.size() + qentries.size();
  summary.payload_bytes = compiler.payload_bytes;
  summary.targets = archs;
  summary.output = dst;
  summary.data_file = written.data_file;
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return summary;
}

}  // namespace onnx_prepack
