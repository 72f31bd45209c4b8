// The compiled entries of MatMulNBits weights, for `compile`: one per weight
// q_gemm_b_jobs lists, with its lineage (SPEC 4.5) in metadata_props.
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
    e.primary_digest = {job.source, dg.digest};
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace onnx_prepack::pack
