// Hashing ahead of resolution (docs/deploy.md): under `full`, and under `memo`
// for ranges no record vouches for, every source and payload of the entries
// made for this host is hashed at once, many tensors in flight on the pool,
// before the rules of resolver.cc run one request at a time. A tensor hashed
// alone splits into subtrees that the pool's threads must join; whole tensors
// per thread need no join, so a load hashes at the rate of `b3sum` on all
// cores. The rules themselves are unchanged: they consume these digests
// instead of computing them. A payload is hashed ahead only when its source has
// one entry usable on this host (see below). Resolve layer.
#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <set>

#include "resolve/resolver.h"
#include "types/struct_type.h"

namespace onnx_prepack::resolve {
namespace {

// One tensor or payload to hash; `weight` (its bytes) orders the work.
struct Work {
  uint64_t weight = 0;
  bool source = false;
  int index = -1;  // initializer index (source) or compiled_tensors index (payload)
  digest::Algorithm algorithm = digest::Algorithm::kBlake3;
  std::span<const uint8_t> payload;
  std::span<const uint8_t> populate;  // a source's mapped bytes (external), paged in first
  PayloadLocation where;
  // Results.
  bool ok = false;
  digest::Digest digest{};
  uint64_t bytes_hashed = 0;
  bool memo_used = false;
  PayloadHash payload_hash;
};

// A source's size, and its mapped bytes when external.
uint64_t source_weight(const format::Model& model, const onnx::TensorProto& t, int index,
                       std::span<const uint8_t>* mapped) {
  if (format::storage_of(t) == format::Storage::kExternal) {
    Result<format::ExternalSpan> span =
        model.resolve_external(t.external_data(), format::tensor_context(index, t.name()));
    if (!span.ok()) return 0;
    *mapped = span->bytes();
    return span->length;
  }
  return t.ByteSizeLong();
}

}  // namespace

void Resolver::prefetch_digests() {
  base::ThreadPool* pool = options_.pool;
  if (pool == nullptr || pool->size() < 2) return;  // one thread: nothing to overlap
  const onnx::ModelProto& proto = model_.proto();
  std::vector<Work> work;
  std::set<std::pair<int, int>> sources;  // (initializer, algorithm) already listed
  // Payloads of sources with one usable entry only: with several (a compile for
  // several targets), which one the rules prefer depends on the request's
  // formats, and hashing the others would be wasted; those are hashed on demand.
  std::map<std::string, std::vector<Work>> payloads_by_source;
  for (int idx = 0; idx < proto.compiled_tensors_size(); ++idx) {
    const onnx::CompiledTensorProto& ct = proto.compiled_tensors(idx);
    if (invalid_entries_.count(idx) != 0) continue;
    if (ct.device() < 0 || ct.device() >= proto.devices_size()) continue;
    const device::DeviceMatch dm = device::match_device(
        proto.devices(ct.device()), host_, options_.runtime_name, options_.runtime_version);
    if (!dm.ok()) continue;  // the rules reject it before any hashing
    Result<const onnx::StructTypeProto*> type = types::value_type(proto, ct.value());
    if (!type.ok()) continue;
    const std::string ctx = "compiled_tensors[" + std::to_string(idx) + "]";
    std::optional<digest::Algorithm> alg;
    if (digest_fields_rule(ct, ctx, alg)) continue;
    Hit hit;
    hit.entry = idx;
    if (payload_rule(ct, ctx, (*type)->name(), hit)) continue;
    const int init = model_.initializer_index(ct.source_name());
    if (init < 0) continue;
    const auto key = std::make_pair(ct.source_name(), static_cast<int>(*alg));
    if (digests_.count(key) == 0 && sources.insert({init, static_cast<int>(*alg)}).second) {
      Work w;
      w.source = true;
      w.index = init;
      w.algorithm = *alg;
      w.weight = source_weight(model_, proto.graph().initializer(init), init, &w.populate);
      work.push_back(std::move(w));
    }
    Work p;
    p.index = idx;
    p.algorithm = *alg;
    p.payload = hit.payload;
    p.where = payload_location(hit, ctx);
    p.weight = hit.payload.size();
    payloads_by_source[ct.source_name()].push_back(std::move(p));
  }
  for (auto& [name, payloads] : payloads_by_source) {
    if (payloads.size() == 1) work.push_back(std::move(payloads.front()));
  }
  if (work.size() < 2) return;  // one tensor: its own subtrees use the pool
  // Largest first; a tensor above a share of the whole is split across the
  // pool on its own (whole tensors per thread would leave threads idle).
  std::stable_sort(work.begin(), work.end(),
                   [](const Work& a, const Work& b) { return a.weight > b.weight; });
  uint64_t total = 0;
  for (const Work& w : work) total += w.weight;
  const uint64_t share = total / (2 * pool->size());
  auto hash_one = [&](Work& w, base::ThreadPool* hash_pool) {
    if (w.source) {
      const onnx::TensorProto& t = proto.graph().initializer(w.index);
      std::optional<MemoKey> key;
      if (memo_) {
        Result<MemoKey> k = memo_->key_for(model_, w.index, w.algorithm);
        if (k.ok()) {
          key = std::move(k).value();
          if (std::optional<digest::Digest> d = memo_->lookup(*key, nullptr)) {
            w.digest = *d;
            w.memo_used = true;
            w.ok = true;
            return;
          }
        }
      }
      // Hashed whole: its page tables filled in one call, not 16 pages per fault.
      if (!w.populate.empty()) base::populate_read(w.populate.data(), w.populate.size());
      digest::DigestOptions opts;
      opts.algorithm = w.algorithm;
      opts.pool = hash_pool;
      Result<digest::TensorDigest> td =
          digest::digest_tensor(model_, t, format::tensor_context(w.index, t.name()), opts);
      if (!td.ok()) return;  // resolve() hashes again and reports the error
      w.digest = td->digest;
      w.bytes_hashed = td->content_bytes;
      w.ok = true;
      if (key) (void)memo_->record(*key, w.digest);  // best effort: a cache
      return;
    }
    w.payload_hash = hash_payload(w.payload, w.algorithm, memo_.get(), w.where, hash_pool);
    w.bytes_hashed = w.payload_hash.bytes_hashed;
    w.ok = true;
  };
  size_t first_small = 0;
  while (first_small < work.size() && work[first_small].weight > share) {
    hash_one(work[first_small], pool);
    ++first_small;
  }
  const size_t small = work.size() - first_small;
  if (small > 0) {
    std::atomic<size_t> next{first_small};
    pool->parallel_for(pool->size(), [&](size_t, size_t) {
      for (size_t i = next.fetch_add(1); i < work.size(); i = next.fetch_add(1)) {
        hash_one(work[i], nullptr);
      }
    });
  }
  for (Work& w : work) {
    if (!w.ok) continue;
    totals_.bytes_hashed += w.bytes_hashed;
    if (w.source) {
      const auto key =
          std::make_pair(proto.graph().initializer(w.index).name(), static_cast<int>(w.algorithm));
      digests_.emplace(key, w.digest);
      prefetched_sources_[key] = Prefetched{w.bytes_hashed, w.memo_used};
      if (w.memo_used) ++totals_.memo_hits;
    } else {
      prefetched_payloads_.emplace(w.index, std::move(w.payload_hash));
    }
  }
}

}  // namespace onnx_prepack::resolve
