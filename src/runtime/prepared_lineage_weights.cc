// ResolvedWeights for packs with a lineage (SPEC 4.5): the request carries the
// consuming node's roles and attributes; the resolver checks them on every
// candidate. A hit maps the payload (copied only when misaligned), a miss packs now.
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "runtime/prepared_weights.h"

namespace onnx_prepack::runtime {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Result<std::pair<uint8_t*, std::shared_ptr<void>>> aligned_buffer(uint64_t size,
                                                                  const std::string& what) {
  void* mem = std::aligned_alloc(64, std::max<uint64_t>(64, (size + 63) / 64 * 64));
  if (mem == nullptr) return resource_exhausted(what + ": cannot allocate " + std::to_string(size));
  return std::make_pair(static_cast<uint8_t*>(mem), std::shared_ptr<void>(mem, std::free));
}

}  // namespace

Result<LineagePack> ResolvedWeights::prepare_lineage(const LineagePackRequest& r) {
  // Nodes sharing B with other scales or attributes get packs of their own.
  std::string key = r.source + '\n' + r.format;
  for (const auto& [k, v] : r.roles) key += '\n' + k + '=' + v;
  for (const auto& [k, v] : r.attrs) key += '\n' + k + '=' + v;
  if (auto it = lineage_cache_.find(key); it != lineage_cache_.end()) return it->second;
  resolve::PackRequest request;
  request.source_name = r.source;
  resolve::AcceptableFormat af;
  af.name = r.format;
  af.format_version = r.format_version;
  af.check_dims = [&r](const onnx::TensorProto&, const onnx::StructTypeProto&,
                       std::span<const uint64_t> dims) -> Status {
    if (!std::equal(dims.begin(), dims.end(), r.dims.begin(), r.dims.end())) {
      return invalid_argument("dims do not fit the node's shape");
    }
    return ok_status();
  };
  request.formats.push_back(std::move(af));
  request.lineage = resolve::LineageRequest{r.roles, r.attrs};

  WeightDecision d;
  d.name = r.source;
  d.consumer = r.consumer;
  d.format = r.format;
  LineagePack out;
  resolve::Resolution res = resolve_recorded(request, d);
  if (res.is_hit() && res.hit->payload.size() == r.bytes) {
    const auto& hit = *res.hit;
    out.bytes = hit.payload;
    out.keep_alive = hit.keep_alive;
    if (reinterpret_cast<uintptr_t>(hit.payload.data()) % 64 != 0) {
      OP_ASSIGN_OR_RETURN(auto buf, aligned_buffer(r.bytes, "weight '" + r.source + "'"));
      std::memcpy(buf.first, hit.payload.data(), hit.payload.size());
      out.bytes = {buf.first, hit.payload.size()};
      out.keep_alive = buf.second;
    }
    d.decision = "hit";
    d.detail = hit.entry >= 0 ? "compiled_tensors[" + std::to_string(hit.entry) + "]"
                              : "cache " + hit.cache_path;
    d.bytes_mapped = hit.payload.size();
    if (hit.payload_external) hit_payloads_.push_back(hit.payload);
  } else {
    d.decision = "miss";
    d.reason = std::string(resolve::miss_reason_id(res.reason));
    d.detail = res.detail;
    auto t1 = std::chrono::steady_clock::now();
    OP_ASSIGN_OR_RETURN(auto buf, aligned_buffer(r.bytes, "weight '" + r.source + "'"));
    OP_RETURN_IF_ERROR(r.pack(std::span<uint8_t>(buf.first, r.bytes)));
    d.pack_ms = ms_since(t1);
    d.bytes_packed = r.bytes;
    out.bytes = {buf.first, r.bytes};
    out.keep_alive = buf.second;
  }
  decisions_.push_back(std::move(d));
  lineage_cache_[key] = out;
  return out;
}

}  // namespace onnx_prepack::runtime
