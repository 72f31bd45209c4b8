// onnx-prepack compile MODEL -o OUT [--target host|ARCH]... [--digest blake3|sha256]
//                      [--lift-constants] [--threads N] [--json]
// Packs every eligible MatMul/Gemm B for each target and writes OUT with
// devices, struct_types and compiled_tensors (docs/cli.md, "compile").
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/json.h"
#include "base/thread_pool.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "device/cpu_features.h"
#include "device/device_match.h"
#include "digest/canonical_tensor.h"
#include "digest/digest.h"
#include "format/model.h"
#include "format/model_writer.h"
#include "pack/format_list.h"
#include "pack/gemm_b_weights.h"
#include "resolve/memo_store.h"
#include "resolve/payload_check.h"

namespace onnx_prepack::cli {
namespace {

constexpr const char* kUsage =
    "usage: onnx-prepack compile MODEL -o OUT [--target host|ARCH]... [--digest blake3|sha256]\n"
    "                            [--lift-constants] [--threads N] [--memo-dir DIR] [--no-memo]\n"
    "                            [--json]\n";

using kernels::PackSourceLayout;

// Records the digests just computed against the output file's identity, so a
// later `--verify memo` load hashes nothing (SPEC 7.2). A record taken within
// the timestamp granularity of the file's last change is never trusted, and
// the output was just written: wait out that window before taking identities.
Status record_memo(const std::string& output, const std::string& memo_dir,
                   digest::Algorithm algorithm,
                   const std::vector<std::pair<std::string, digest::Digest>>& hashed) {
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
    const int64_t changed = std::max(pm->key.file.mtime_ns, pm->key.file.ctime_ns);
    const int64_t wait_ns = changed + store.granularity_ns(pm->key) - pm->key.stat_time_ns;
    if (wait_ns > 0) {
      ::usleep(useconds_t(wait_ns / 1000 + 1000));
      OP_ASSIGN_OR_RETURN(pm, resolve::payload_memo_for(*out, i));
    }
    OP_RETURN_IF_ERROR(store.record(pm->key, pm->digest));
  }
  return ok_status();
}

// One weight to pack in one layout (a B may feed several consumers).
struct Job {
  std::string source;
  PackSourceLayout layout;
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

void progress(size_t done, size_t total, const std::string& what) {
  static const bool tty = isatty(fileno(stderr));
  if (!tty || total == 0) return;
  constexpr int kWidth = 30;
  const int fill = int(kWidth * done / total);
  std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu %-40.40s", fill, "##############################",
               kWidth - fill, "", done, total, what.c_str());
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace

int cmd_compile(int argc, char** argv) {
  std::vector<std::string> storage(argv, argv + argc);
  for (auto& a : storage) {
    if (a == "-o") a = "--output";
  }
  std::vector<char*> av;
  for (auto& a : storage) av.push_back(a.data());
  auto args = Args::parse(int(av.size()), av.data(), {"json", "help", "lift-constants", "no-memo"},
                          {"output", "target", "digest", "threads", "memo-dir"});
  if (!args.ok()) return report_error("compile", args.status());
  if (args->has("help") || args->positionals().size() != 1 || !args->get("output")) {
    std::fputs(kUsage, args->has("help") ? stdout : stderr);
    return args->has("help") ? kExitOk : kExitUsage;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string digest_name = args->get("digest").value_or("blake3");
  const auto algorithm = digest::algorithm_from_name(digest_name);
  if (!algorithm) {
    return report_error("compile", invalid_argument("--digest '" + digest_name +
                                                    "' is not known, expected blake3 or sha256"));
  }
  auto threads = args->get_int("threads", 0, 0, 1024);
  if (!threads.ok()) return report_error("compile", threads.status());

  // Targets -> architecture strings of our formats.
  std::set<std::string> known_arch;
  for (const pack::GemmBFormat* f : pack::gemm_b_formats())
    known_arch.insert(std::string(f->architecture));
  std::vector<std::string> targets = args->get_all("target");
  if (targets.empty()) targets.push_back("host");
  std::vector<std::string> archs;
  for (const std::string& t : targets) {
    std::string arch = t;
    if (t == "host") {
      const auto* f = pack::gemm_b_runtime_format(PackSourceLayout::kKN, onnx::TensorProto::FLOAT,
                                                  device::host_isa_level());
      if (device::host_isa_level() == device::IsaLevel::kRef) {
        return report_error("compile", invalid_argument("--target host: this host has no "
                                                        "architecture with a packed format"));
      }
      arch = std::string(f->architecture);
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
      return report_error("compile", invalid_argument("--target '" + t +
                                                      "' has no packed format, expected host or "
                                                      "one of " +
                                                      list));
    }
    if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
  }

  auto loaded = format::Model::load(args->positionals()[0]);
  if (!loaded.ok()) return report_error("compile", loaded.status());
  std::unique_ptr<format::Model> model = std::move(loaded).value();
  int lifted = 0;
  if (args->has("lift-constants")) {
    onnx::ModelProto copy = model->proto();
    lifted = lift_constants(copy);
    model = format::Model::from_proto(std::move(copy), model->base_dir());
  }
  base::ThreadPool pool{static_cast<size_t>(*threads)};
  onnx::ModelProto& out = model->proto();
  const std::vector<Job> jobs = eligible(*model);

  std::map<std::string, int> type_index, device_index;
  for (int i = 0; i < out.struct_types_size(); ++i) type_index[out.struct_types(i).name()] = i;
  // Recompiling a compiled model (in place too): reuse its devices, so the new
  // entries replace the old ones of the same key instead of adding duplicates.
  for (int i = 0; i < out.devices_size(); ++i) {
    const onnx::DeviceProto& d = out.devices(i);
    if (d.type() == "cpu" && !d.has_index() && d.metadata_props_size() == 0 &&
        d.runtime() == device::kRuntimeName && d.runtime_version() == device::kPackingAbiVersion) {
      device_index.emplace(d.architecture(), i);
    }
  }
  uint64_t payload_bytes = 0;
  size_t entries = 0;
  std::vector<onnx::CompiledTensorProto> compiled;
  std::vector<std::pair<std::string, digest::Digest>> hashed;
  struct PendingPayload {
    const pack::GemmBFormat* format;
    pack::GemmBSource source;
    std::string context;
    std::string name;
    uint64_t size;
  };
  std::vector<PendingPayload> pending;  // parallel to `compiled`
  std::vector<std::shared_ptr<std::vector<uint32_t>>> keep_alive;
  std::vector<std::shared_ptr<std::vector<uint8_t>>> keep_alive_bytes;
  for (const Job& job : jobs) {
    const onnx::TensorProto& t = *model->find_initializer(job.source);
    const std::string ctx = format::tensor_context(model->initializer_index(job.source), t.name());
    auto dg = digest::digest_tensor(*model, t, ctx, {*algorithm, &pool});
    if (!dg.ok()) return report_error("compile", dg.status());
    hashed.emplace_back(job.source, dg->digest);
    std::vector<uint8_t> converted;
    std::span<const uint8_t> content;
    auto tb = model->tensor_bytes(t, ctx);
    if (tb.ok() &&
        (tb->storage == format::Storage::kRaw || tb->storage == format::Storage::kExternal)) {
      content = tb->bytes;
    } else {
      auto c = typed_content(*model, t, ctx);
      if (!c.ok()) return report_error("compile", c.status());
      converted = std::move(c).value();
      content = converted;
    }
    // Raw bytes inside a protobuf string may be unaligned for float loads.
    std::vector<uint32_t> aligned;
    if (reinterpret_cast<uintptr_t>(content.data()) % 4 != 0) {
      aligned.resize((content.size() + 3) / 4);
      std::memcpy(aligned.data(), content.data(), content.size());
      content = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(aligned.data()),
                                         content.size());
    }
    // The packs are made later, while writing: keep copied sources alive until then
    // (moving a vector keeps its buffer, so `content` stays valid).
    if (!aligned.empty())
      keep_alive.push_back(std::make_shared<std::vector<uint32_t>>(std::move(aligned)));
    if (!converted.empty()) {
      keep_alive_bytes.push_back(std::make_shared<std::vector<uint8_t>>(std::move(converted)));
    }
    auto src =
        pack::gemm_b_source(content, t.data_type(),
                            std::span<const int64_t>(t.dims().data(), t.dims_size()), job.layout);
    if (!src.ok()) return report_error("compile", src.status().with_context(ctx));
    for (const std::string& arch : archs) {
      for (const pack::GemmBFormat* f : pack::gemm_b_formats()) {
        if (f->architecture != arch || f->layout != job.layout || f->source_type != t.data_type())
          continue;
        if (!type_index.count(std::string(f->name))) {
          type_index[std::string(f->name)] = out.struct_types_size();
          *out.add_struct_types() = pack::gemm_b_struct_type(*f);
        }
        if (!device_index.count(arch)) {
          device_index[arch] = out.devices_size();
          auto* d = out.add_devices();
          d->set_type("cpu");
          d->set_architecture(arch);
          d->set_runtime(std::string(device::kRuntimeName));
          d->set_runtime_version(std::string(device::kPackingAbiVersion));
        }
        // Packed while the output is written (format::WriteOptions::lazy_payloads), so only
        // one payload is in memory at a time.
        const uint64_t payload_size = pack::gemm_b_payload_bytes(*f, src->k, src->n);
        pending.push_back({f, *src, ctx, job.source, payload_size});
        onnx::CompiledTensorProto ct;
        ct.set_source_name(job.source);
        ct.set_device(device_index[arch]);
        ct.set_source_digest(dg->digest.data(), dg->digest.size());
        ct.set_digest_algorithm(std::string(digest::algorithm_name(*algorithm)));
        auto* v = ct.mutable_value();
        v->set_type(type_index[std::string(f->name)]);
        for (uint64_t d : pack::gemm_b_dims(*f, src->k, src->n)) v->add_dims(d);
        payload_bytes += payload_size;
        compiled.push_back(std::move(ct));
        ++entries;
        break;
      }
    }
  }
  // Replace entries we would duplicate ((source, device, type) keys must stay unique).
  std::set<std::tuple<std::string, int, int>> keys;
  for (const auto& ct : compiled) keys.insert({ct.source_name(), ct.device(), ct.value().type()});
  google::protobuf::RepeatedPtrField<onnx::CompiledTensorProto> kept;
  for (auto& ct : *out.mutable_compiled_tensors()) {
    if (!ct.value().has_struct_type() &&
        keys.count({ct.source_name(), ct.device(), ct.value().type()}))
      continue;
    *kept.Add() = std::move(ct);
  }
  for (auto& ct : compiled) *kept.Add() = std::move(ct);
  out.mutable_compiled_tensors()->Swap(&kept);

  format::WriteOptions wo;
  wo.payload_threshold = 0;
  wo.alignment = 4096;
  const int first_new = out.compiled_tensors_size() - int(pending.size());
  for (size_t k = 0; k < pending.size(); ++k) {
    const PendingPayload* p = &pending[k];
    wo.lazy_payloads[first_new + int(k)] = {
        p->size, [p, k, &pending, &pool](std::span<uint8_t> dst) -> Status {
          progress(k, pending.size(), p->name);
          return pack::gemm_b_pack(*p->format, p->source, dst, &pool).with_context(p->context);
        }};
  }
  // SPEC 4.6: every payload written records its digest; entries whose old
  // payload is gone or truncated are replaced, not fatal; the data file gets a
  // fresh name and the model is published last.
  wo.on_payload = [&out, &pool, first_new](int i, std::span<const uint8_t> payload) {
    auto* ct = out.mutable_compiled_tensors(i);
    if (i < first_new) return resolve::copied_payload_intact(*ct, payload, &pool);
    if (auto alg = digest::algorithm_from_name(ct->digest_algorithm())) {
      resolve::set_payload_digest(*ct->mutable_metadata_props(), *alg, payload, &pool);
    }
    return true;
  };
  wo.drop_unreadable_payloads = true;
  wo.fresh_data_file = true;
  auto written = format::write_model(out, *args->get("output"), wo, model.get());
  progress(pending.size(), pending.size(), "");
  if (!written.ok()) {
    report_error("compile", written.status());
    return written.status().code() == StatusCode::kIoError ? kExitFailure
                                                           : exit_code_for(written.status());
  }
  if (!args->has("no-memo")) {
    Status st =
        record_memo(*args->get("output"), args->get("memo-dir").value_or(""), *algorithm, hashed);
    // The output is complete either way; a memo that cannot be written only costs a hash later.
    if (!st.ok())
      std::fprintf(stderr, "onnx-prepack compile: memo not recorded: %s\n", st.message().c_str());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (args->has("json")) {
    base::Json o = base::Json::object();
    o["entries"] = uint64_t(entries);
    o["payload_bytes"] = payload_bytes;
    o["seconds"] = seconds;
    base::Json ts = base::Json::array();
    for (const auto& a : archs) ts.push_back(base::Json(a));
    o["targets"] = std::move(ts);
    std::printf("%s\n", o.dump(2).c_str());
  } else {
    std::printf("compiled %zu entries (%zu weights x %zu targets), %llu payload bytes in %.2f s",
                entries, jobs.size(), archs.size(), (unsigned long long)payload_bytes, seconds);
    if (lifted) std::printf(", %d constants lifted", lifted);
    std::printf("\nwrote %s", args->get("output")->c_str());
    if (!written->data_file.empty()) std::printf(" and %s", written->data_file.c_str());
    std::printf("\n");
  }
  return kExitOk;
}

}  // namespace onnx_prepack::cli
