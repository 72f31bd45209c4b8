// The WeightPreparer that goes through the resolver (format.md §4.3, 7): for every
// constant weight a pack family takes it asks for the formats the family's
// kernels read on this host; a hit uses the mapped payload in place, a miss
// packs now (and, when the resolver has a writable cache store, persists the
// pack). Every decision is recorded for `run --json`.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/cpu_features.h"
#include "format/model.h"
#include "resolve/resolver.h"
#include "runtime/weights.h"

namespace onnx_prepack::runtime {

struct WeightDecision {
  std::string name;      // source initializer
  std::string consumer;  // first node that asked
  std::string decision;  // "hit" or "miss"
  std::string reason;    // miss reason id ("" on a hit)
  std::string detail;    // miss detail, or where the hit came from
  std::string format;    // format used (hit's, or packed into)
  bool verified = false;
  bool stored = false;  // written back to the cache store
  std::string store_error;
  uint64_t bytes_mapped = 0, bytes_hashed = 0, bytes_packed = 0;
  double resolve_ms = 0, pack_ms = 0, store_ms = 0;
};

struct PreparedTotals {
  uint64_t hits = 0, misses = 0, stored = 0;
  uint64_t bytes_mapped = 0, bytes_hashed = 0, bytes_packed = 0;
  double resolve_ms = 0, pack_ms = 0, store_ms = 0;
};

class ResolvedWeights final : public WeightPreparer {
 public:
  // `resolver` may be null: every weight is then a miss ("no resolver") and packed.
  ResolvedWeights(resolve::Resolver* resolver, device::IsaLevel level, base::ThreadPool* pool);

  // The one preparation body of every pack family (pack/pack_family.h): the
  // family's request at this level (what explain asks too); a hit maps the
  // payload in place (copied when misaligned), a miss packs the family's miss
  // format and writes it back to a writable cache store. A use the family
  // cannot pack (an empty weight) is recorded and left to the consumer.
  Result<PreparedPack> prepare_pack(const WeightRequest& request) override;

  const std::vector<WeightDecision>& decisions() const { return decisions_; }

  // Maps the hits' payload pages into the page table now (MADV_POPULATE_READ,
  // split over the pool) instead of faulting them one by one in the first run.
  // Returns the bytes populated; a refusal by the kernel is not an error.
  uint64_t populate_hits(base::ThreadPool* pool);
  PreparedTotals totals() const;

 private:
  resolve::Resolution resolve_recorded(const resolve::PackRequest& request, WeightDecision& d);
  resolve::Resolver* resolver_;
  device::IsaLevel level_;
  base::ThreadPool* pool_;
  std::map<std::string, PreparedPack> cache_;  // by family, source, use key and lineage
  std::vector<WeightDecision> decisions_;
  std::vector<std::span<const uint8_t>> hit_payloads_;
};

}  // namespace onnx_prepack::runtime
