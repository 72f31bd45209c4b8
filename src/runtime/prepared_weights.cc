#include "runtime/prepared_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernels/vec_math/vec_half.h"
#include "pack/pack_family.h"

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

ResolvedWeights::ResolvedWeights(resolve::Resolver* resolver, device::IsaLevel level,
                                 base::ThreadPool* pool)
    : resolver_(resolver), level_(level), pool_(pool) {}

// The resolver's decision on `request`, its time, verification and hashed
// bytes recorded in `d` (a miss "no resolver" when there is none).
resolve::Resolution ResolvedWeights::resolve_recorded(const resolve::PackRequest& request,
                                                      WeightDecision& d) {
  auto t0 = std::chrono::steady_clock::now();
  resolve::Resolution res;
  if (resolver_ != nullptr) {
    res = resolver_->resolve(request);
  } else {
    res.reason = resolve::MissReason::kNotFound;
    res.detail = "no resolver";
  }
  d.resolve_ms = ms_since(t0);
  d.verified = res.verified;
  d.bytes_hashed = res.bytes_hashed;
  return res;
}

Result<PreparedPack> ResolvedWeights::prepare_pack(const WeightRequest& r) {
  const Tensor& value = *r.value;
  pack::WeightUse use;
  use.source = r.source;
  use.consumer = r.node->name().empty() ? r.node->op_type() : r.node->name();
  use.node = r.node;
  use.input = r.input;
  use.data_type = r.model_type != 0 ? r.model_type : value.dtype;
  use.dims.assign(value.shape.begin(), value.shape.end());
  const pack::PackFamily* family = pack::family_for(*r.node, r.input, use.data_type, use.dims);
  if (family == nullptr) return PreparedPack{};
  resolve::PackRequest request = pack::pack_request(*family, use, level_);
  // Uses with other layouts or lineages get packs of their own.
  std::string key = std::string(family->name()) + '\n' + r.source + '\n' + family->use_key(use);
  if (request.lineage) {
    for (const auto& [k, v] : request.lineage->roles) key += '\n' + k + '=' + v;
    for (const auto& [k, v] : request.lineage->attrs) key += '\n' + k + '=' + v;
  }
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;

  WeightDecision d;
  d.name = r.source;
  d.consumer = use.consumer;
  PreparedPack out;
  resolve::Resolution res = resolve_recorded(request, d);
  if (res.is_hit()) {
    const auto& hit = *res.hit;
    out.format = request.formats[size_t(hit.format_index)].name;
    out.bytes = hit.payload;
    out.keep_alive = hit.keep_alive;
    if (reinterpret_cast<uintptr_t>(hit.payload.data()) % 64 != 0) {
      // An inline payload inside the parsed message may be misaligned: copy it.
      OP_ASSIGN_OR_RETURN(auto buf,
                          aligned_buffer(hit.payload.size(), "weight '" + r.source + "'"));
      std::memcpy(buf.first, hit.payload.data(), hit.payload.size());
      out.bytes = {buf.first, hit.payload.size()};
      out.keep_alive = buf.second;
    }
    d.decision = "hit";
    d.format = out.format;
    d.detail = hit.entry >= 0 ? "compiled_tensors[" + std::to_string(hit.entry) + "]"
                              : "cache " + hit.cache_path;
    d.bytes_mapped = hit.payload.size();
    if (hit.payload_external) hit_payloads_.push_back(hit.payload);
  } else {
    d.decision = "miss";
    d.reason = std::string(resolve::miss_reason_id(res.reason));
    d.detail = res.detail;
    std::optional<pack::FormatInfo> f = family->miss_format(use, level_);
    // The family's pack reads the value's bytes (the session's constant). A
    // FLOAT16 weight the half adapter holds widened (model type FLOAT16, a
    // float value) is narrowed back: exact, fp16 -> fp32 -> fp16 gives the
    // model's bits (a NaN quieted, which widens to the same float), so the
    // pack is that of the model's FLOAT16 tensor.
    std::vector<uint16_t> narrowed;
    std::span<const uint8_t> source(static_cast<const uint8_t*>(value.data), value.nbytes());
    if (use.data_type == onnx::TensorProto::FLOAT16 && value.dtype == kFloat) {
      narrowed.resize(size_t(value.numel()));
      kernels::vec::host_half_convert().f32_to_f16(static_cast<const float*>(value.data),
                                                   narrowed.data(), narrowed.size());
      source = {reinterpret_cast<const uint8_t*>(narrowed.data()), narrowed.size() * 2};
    }
    pack::ContentFn content = [source](const std::string&) -> Result<std::span<const uint8_t>> {
      return source;
    };
    Result<pack::PackPlan> plan =
        f ? family->plan(use, *f, content, pool_)
          : Result<pack::PackPlan>(unimplemented("no format at this level"));
    if (!plan.ok()) {
      // Not packable (an empty weight): the consumer computes from the source.
      d.detail +=
          (d.detail.empty() ? "" : "; ") + std::string("not packed: ") + plan.status().message();
      decisions_.push_back(std::move(d));
      cache_[key] = out;
      return out;
    }
    auto t1 = std::chrono::steady_clock::now();
    OP_ASSIGN_OR_RETURN(auto buf, aligned_buffer(plan->payload_bytes, "weight '" + r.source + "'"));
    std::span<uint8_t> dst(buf.first, plan->payload_bytes);
    const auto& fill = r.pack ? r.pack : plan->pack;
    if (!fill) return internal_error("weight '" + r.source + "': no pack function");
    OP_RETURN_IF_ERROR(fill(dst).with_context("weight '" + r.source + "'"));
    d.pack_ms = ms_since(t1);
    d.bytes_packed = source.size();
    d.format = std::string(f->name);
    out.format = d.format;
    out.bytes = dst;
    out.keep_alive = buf.second;
    if (resolver_ != nullptr && resolver_->options().cache != nullptr &&
        resolver_->options().cache->mode() == resolve::CacheMode::kReadWrite &&
        res.reason != resolve::MissReason::kOverriddenByInput) {
      auto t2 = std::chrono::steady_clock::now();
      for (const auto& a : request.formats) {
        if (a.name != f->name) continue;
        Status s = resolver_->store(request, a, plan->type, plan->dims, dst);
        d.stored = s.ok();
        if (!s.ok()) d.store_error = s.message();  // a failed write-back never fails the run
      }
      d.store_ms = ms_since(t2);
    }
  }
  decisions_.push_back(std::move(d));
  cache_[key] = out;
  return out;
}

uint64_t ResolvedWeights::populate_hits(base::ThreadPool* pool) {
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  constexpr uintptr_t kChunk = uintptr_t(8) << 20;
  std::vector<std::pair<uintptr_t, uintptr_t>> chunks;
  uint64_t total = 0;
  for (auto span : hit_payloads_) {
    uintptr_t b = reinterpret_cast<uintptr_t>(span.data()) & ~(page - 1);
    uintptr_t e = reinterpret_cast<uintptr_t>(span.data()) + span.size();
    total += span.size();
    for (uintptr_t c = b; c < e; c += kChunk) chunks.push_back({c, std::min(e, c + kChunk) - c});
  }
  auto work = [&](size_t i, size_t) {
    // Best effort: older kernels refuse the advice and the first run faults instead.
    (void)madvise(reinterpret_cast<void*>(chunks[i].first), chunks[i].second, MADV_POPULATE_READ);
  };
  if (pool != nullptr) {
    pool->parallel_for(chunks.size(), work);
  } else {
    for (size_t i = 0; i < chunks.size(); ++i) work(i, 0);
  }
  return total;
}

PreparedTotals ResolvedWeights::totals() const {
  PreparedTotals t;
  for (const auto& d : decisions_) {
    (d.decision == "hit" ? t.hits : t.misses)++;
    t.stored += d.stored ? 1 : 0;
    t.bytes_mapped += d.bytes_mapped;
    t.bytes_hashed += d.bytes_hashed;
    t.bytes_packed += d.bytes_packed;
    t.resolve_ms += d.resolve_ms;
    t.pack_ms += d.pack_ms;
    t.store_ms += d.store_ms;
  }
  return t;
}

}  // namespace onnx_prepack::runtime
