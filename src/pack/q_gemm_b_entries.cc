// The compiled entries of MatMulNBits weights, for `compile`: one per weight
// q_gemm_b_jobs lists, with its lineage (SPEC 4.5) in metadata_props.
#include <map>
#include <memory>

#include "digest/digest.h"
#include "pack/q_gemm_b.h"

namespace onnx_prepack::pack {

Result<std::vector<QGemmBEntry>> q_gemm_b_entries(const format::Model& model,
                                                  digest::Algorithm algorithm,
                                                  base::ThreadPool* pool) {
  std::vector<QGemmBEntry> out;
  for (const QGemmBJob& job : q_gemm_b_jobs(model)) {
    const onnx::TensorProto& b = *model.find_initializer(job.source);
    const std::string ctx = format::tensor_context(model.initializer_index(job.source), job.source);
    OP_ASSIGN_OR_RETURN(digest::TensorDigest dg,
                        digest::digest_tensor(model, b, ctx, {algorithm, pool}));
    OP_ASSIGN_OR_RETURN(auto props,
                        resolve::lineage_props(matmul_nbits_lineage(*job.node), model, algorithm));
    QGemmBEntry e;
    e.entry.set_source_name(job.source);
    e.entry.set_source_digest(dg.digest.data(), dg.digest.size());
    e.entry.set_digest_algorithm(std::string(digest::algorithm_name(algorithm)));
    for (uint64_t d : q_gemm_b_dims(job.shape)) e.entry.mutable_value()->add_dims(d);
    for (auto& [k, v] : props) {
      auto* m = e.entry.add_metadata_props();
      m->set_key(k);
      m->set_value(v);
    }
    e.type = q_gemm_b_struct_type(*job.format);
    e.architecture = std::string(job.format->architecture);
    e.payload_bytes = q_gemm_b_payload_bytes(job.shape);
    e.pack = [&model, job](std::span<uint8_t> dst) { return q_gemm_b_pack_job(model, job, dst); };
    e.digests.emplace_back(job.source, dg.digest);
    std::map<std::string, std::string> names;  // lineage.<role> -> initializer
    for (const auto& [k, v] : props) names[k] = v;
    for (const auto& [k, v] : props) {
      const std::string suffix = ".digest";
      if (k.size() <= suffix.size() || k.compare(k.size() - suffix.size(), suffix.size(), suffix))
        continue;
      digest::Digest d{};
      for (size_t i = 0; i < d.size() && 2 * i + 1 < v.size(); ++i) {
        d[i] = uint8_t(std::stoul(v.substr(2 * i, 2), nullptr, 16));
      }
      e.digests.emplace_back(names[k.substr(0, k.size() - suffix.size())], d);
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace onnx_prepack::pack

namespace onnx_prepack::pack {

resolve::PackRequest q_gemm_b_request(const QGemmBJob& job) {
  resolve::PackRequest r;
  r.source_name = job.source;
  resolve::AcceptableFormat af;
  af.name = std::string(job.format->name);
  af.format_version = std::string(job.format->version);
  const QGemmBFormat* f = job.format;
  const kernels::QGemmShape s = job.shape;
  af.check_dims = [f, s](const onnx::TensorProto&, const onnx::StructTypeProto& type,
                         std::span<const uint64_t> dims) {
    return q_gemm_b_check_entry(*f, type, dims, s);
  };
  r.formats.push_back(std::move(af));
  r.lineage = matmul_nbits_lineage(*job.node);
  return r;
}

std::vector<std::string> lineage_summary(const onnx::CompiledTensorProto& entry) {
  std::vector<std::string> out;
  std::map<std::string, std::string> digests;
  for (const auto& kv : entry.metadata_props()) {
    const std::string& k = kv.key();
    if (k.rfind("lineage.", 0) == 0 && k.size() > 7 && k.find(".digest") == k.size() - 7) {
      digests[k.substr(8, k.size() - 15)] = kv.value();
    }
  }
  for (const auto& kv : entry.metadata_props()) {
    const std::string& k = kv.key();
    if (k.rfind("lineage.", 0) == 0 && !(k.size() > 7 && k.find(".digest") == k.size() - 7)) {
      const std::string role = k.substr(8);
      std::string item = role + "=" + (kv.value().empty() ? "(absent)" : kv.value());
      if (digests.count(role)) item += " (" + digests[role].substr(0, 16) + "...)";
      out.push_back(item);
    } else if (k.rfind("attr.", 0) == 0) {
      out.push_back(k.substr(5) + "=" + kv.value());
    }
  }
  return out;
}

}  // namespace onnx_prepack::pack
