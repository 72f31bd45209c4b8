// The WeightPreparer that goes through the resolver (SPEC 4.3, 7): for every
// constant MatMul/Gemm B it asks for the formats the pack layer accepts on this
// host; a hit uses the mapped payload in place, a miss packs now (and, when the
// resolver has a writable cache store, persists the pack). Every decision is
// recorded for `run --json`.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <tuple>
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

  Result<std::shared_ptr<const PreparedB>> prepare(const std::string& source, const Tensor& b,
                                                   bool transposed,
                                                   const std::string& consumer) override;
  // Conv filters the same way (prepared_conv_filters.cc).
  Result<std::shared_ptr<const PreparedConvFilter>> prepare_conv(
      const std::string& source, const Tensor& w, const kernels::ConvGeometry& g, size_t mr,
      const std::string& consumer, bool transposed = false) override;

  // MatMulNBits weights (prepared_lineage_weights.cc): no cache-store write-back,
  // the store's keys name one source.
  Result<LineagePack> prepare_lineage(const LineagePackRequest& request) override;

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
  std::map<std::pair<std::string, bool>, std::shared_ptr<const PreparedB>> cache_;
  std::map<std::string, LineagePack> lineage_cache_;
  std::map<std::tuple<std::string, int64_t, bool>, std::shared_ptr<const PreparedConvFilter>>
      conv_cache_;  // (source, group, transposed)
  std::vector<WeightDecision> decisions_;
  std::vector<std::span<const uint8_t>> hit_payloads_;
};

}  // namespace onnx_prepack::runtime
