#include "runtime/prepared_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "pack/format_list.h"

namespace onnx_prepack::runtime {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A B packed in one of the pack layer's formats, mapped (hit) or owned (miss).
class PackedB final : public PreparedB {
 public:
  PackedB(pack::PackedGemmB b, std::shared_ptr<const void> keep) : b_(b), keep_(std::move(keep)) {}
  int64_t k() const override { return int64_t(b_.k); }
  int64_t n() const override { return int64_t(b_.n); }
  void multiply(int64_t m, const float* a, int64_t lda, float* c, int64_t ldc, bool accumulate,
                base::ThreadPool* pool, Workspace*) const override {
    pack::GemmCall call;
    call.m = size_t(m);
    call.a = a;
    call.lda = size_t(lda);
    // The driver writes C; accumulation goes through a temporary (its bias
    // epilogue may not alias C: a tile is stored before its bias is read).
    std::unique_ptr<float[]> tmp;
    if (accumulate) tmp.reset(new float[size_t(m * n())]);
    call.c = accumulate ? tmp.get() : c;
    call.ldc = accumulate ? size_t(n()) : size_t(ldc);
    Status s = pack::run_gemm(b_, call, pool);
    if (!s.ok()) std::abort();  // sizes were checked when the kernel was built
    if (accumulate) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n(); ++j) c[i * ldc + j] += tmp[size_t(i * n() + j)];
      }
    }
  }

 private:
  pack::PackedGemmB b_;
  std::shared_ptr<const void> keep_;
};

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

Result<std::shared_ptr<const PreparedB>> ResolvedWeights::prepare(const std::string& source,
                                                                  const Tensor& b, bool transposed,
                                                                  const std::string& consumer) {
  auto key = std::make_pair(source, transposed);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  auto layout = transposed ? kernels::PackSourceLayout::kNK : kernels::PackSourceLayout::kKN;
  std::span<const uint8_t> bytes(static_cast<const uint8_t*>(b.data), b.nbytes());
  OP_ASSIGN_OR_RETURN(pack::GemmBSource src, pack::gemm_b_source(bytes, b.dtype, b.shape, layout));
  resolve::PackRequest request;
  request.source_name = source;
  request.formats = pack::gemm_b_acceptable_formats(layout, b.dtype, level_);

  WeightDecision d;
  d.name = source;
  d.consumer = consumer;
  std::shared_ptr<const PreparedB> prepared;
  resolve::Resolution res = resolve_recorded(request, d);
  if (res.is_hit()) {
    const auto& hit = *res.hit;
    const pack::GemmBFormat* f =
        pack::find_gemm_b_format(request.formats[size_t(hit.format_index)].name);
    if (f == nullptr) return internal_error("weight '" + source + "': hit in an unknown format");
    pack::PackedGemmB pb{f, hit.payload, src.k, src.n};
    std::shared_ptr<const void> keep = hit.keep_alive;
    if (reinterpret_cast<uintptr_t>(hit.payload.data()) % 64 != 0) {
      // An inline payload inside the parsed message may be misaligned: copy it.
      void* mem = std::aligned_alloc(64, std::max<size_t>(64, (hit.payload.size() + 63) / 64 * 64));
      if (mem == nullptr)
        return resource_exhausted("weight '" + source + "': cannot copy the pack");
      std::memcpy(mem, hit.payload.data(), hit.payload.size());
      keep = std::shared_ptr<void>(mem, std::free);
      pb.payload = {static_cast<const uint8_t*>(mem), hit.payload.size()};
    }
    d.decision = "hit";
    d.format = std::string(f->name);
    d.detail = hit.entry >= 0 ? "compiled_tensors[" + std::to_string(hit.entry) + "]"
                              : "cache " + hit.cache_path;
    d.bytes_mapped = hit.payload.size();
    prepared = std::make_shared<PackedB>(pb, keep);
    if (hit.payload_external) hit_payloads_.push_back(hit.payload);
  } else {
    d.decision = "miss";
    d.reason = std::string(resolve::miss_reason_id(res.reason));
    d.detail = res.detail;
    const pack::GemmBFormat* f = pack::gemm_b_runtime_format(layout, b.dtype, level_);
    if (f == nullptr) {
      return unimplemented("weight '" + source + "': no pack format for " + dtype_name(b.dtype));
    }
    auto t1 = std::chrono::steady_clock::now();
    uint64_t size = pack::gemm_b_payload_bytes(*f, src.k, src.n);
    void* mem = std::aligned_alloc(64, std::max<uint64_t>(64, (size + 63) / 64 * 64));
    if (mem == nullptr)
      return resource_exhausted("weight '" + source + "': cannot allocate the pack");
    std::shared_ptr<void> owner(mem, std::free);
    std::span<uint8_t> out(static_cast<uint8_t*>(mem), size);
    OP_RETURN_IF_ERROR(pack::gemm_b_pack(*f, src, out, pool_));
    d.pack_ms = ms_since(t1);
    d.bytes_packed = b.nbytes();
    d.format = std::string(f->name);
    if (resolver_ != nullptr && resolver_->options().cache != nullptr &&
        resolver_->options().cache->mode() == resolve::CacheMode::kReadWrite &&
        res.reason != resolve::MissReason::kOverriddenByInput) {
      auto t2 = std::chrono::steady_clock::now();
      const resolve::AcceptableFormat* af = nullptr;
      for (const auto& a : request.formats) {
        if (a.name == f->name) af = &a;
      }
      if (af != nullptr) {
        auto dims = pack::gemm_b_dims(*f, src.k, src.n);
        Status s = resolver_->store(request, *af, pack::gemm_b_struct_type(*f), dims, out);
        d.stored = s.ok();
        if (!s.ok()) d.store_error = s.message();  // a failed write-back never fails the run
      }
      d.store_ms = ms_since(t2);
    }
    pack::PackedGemmB pb{f, std::span<const uint8_t>(out.data(), out.size()), src.k, src.n};
    prepared = std::make_shared<PackedB>(pb, owner);
  }
  decisions_.push_back(std::move(d));
  cache_[key] = prepared;
  return prepared;
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
