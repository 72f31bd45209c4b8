// The resolver: applies the loading rules of format.md §4.3 to one consumer's pack
// request and returns a hit (entry + payload span, no copy for external
// payloads) or a miss with a reason from miss_reason.h. It knows no concrete
// format: the pack layer supplies the acceptable formats. Resolve layer;
// format.md §4.3, §6, §7.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "check/check.h"
#include "device/device_match.h"
#include "digest/digest.h"
#include "format/model.h"
#include "onnx_prepack/options.hpp"
#include "resolve/cache_store.h"
#include "resolve/lineage.h"
#include "resolve/memo_store.h"
#include "resolve/miss_reason.h"
#include "resolve/payload_check.h"

namespace onnx_prepack::resolve {

// format.md §7.2 (the engine's typed option, include/onnx_prepack/options.hpp).
using onnx_prepack::verify_policy_from_name;
using onnx_prepack::verify_policy_name;
using onnx_prepack::VerifyPolicy;

// One physical format a consumer's kernel can read, as the pack layer lists it.
struct AcceptableFormat {
  std::string name;                   // StructTypeProto.name, matched exactly
  std::string format_version;         // metadata_props["format_version"], matched exactly
  std::string required_architecture;  // ISA the kernel needs ("x86_64-avx2-fma"); empty = none
  // Optional: rejects an entry whose dims do not fit the source (shape, element
  // type). An error becomes a `format_mismatch` miss with its message.
  std::function<Status(const onnx::TensorProto& source, const onnx::StructTypeProto& type,
                       std::span<const uint64_t> dims)>
      check_dims;
};

// What one consumer asks for: a source initializer and the formats it accepts,
// best first (the pack layer's preference on this host).
struct PackRequest {
  std::string source_name;
  std::vector<AcceptableFormat> formats;
  // Why `formats` is empty, when the pack layer knows more than "none at this
  // level" ("no packed format for family gemm_b on aarch64"); appended to the
  // no_acceptable_format detail.
  std::string no_format_detail;
  // Set for packs that read other initializers too (format.md §4.5; lineage.h).
  std::optional<LineageRequest> lineage = std::nullopt;
};

struct ResolverOptions {
  VerifyPolicy verify = VerifyPolicy::kFull;
  // Memo store folder; empty = MemoStore::default_dir(). Used with kMemo only.
  std::string memo_dir;
  // Timestamp granularity for trusting memo records; < 0 = detect per file.
  int64_t memo_granularity_ns = -1;
  // Write-back store consulted after the model's own entries miss; null = none.
  // Not owned; must outlive the resolver.
  CacheStore* cache = nullptr;
  // Graph inputs fed in this run: an initializer of the same name is overridden.
  std::set<std::string, std::less<>> fed_inputs;
  // Identity matched against DeviceProto.runtime / runtime_version.
  std::string runtime_name = std::string(device::kRuntimeName);
  std::string runtime_version = std::string(device::kPackingAbiVersion);
  // Algorithm for cache-store keys (and entries' own algorithms otherwise).
  digest::Algorithm cache_algorithm = digest::Algorithm::kBlake3;
  // Pool for hashing large sources; null = calling thread only.
  base::ThreadPool* pool = nullptr;
};

// The decision on one candidate entry (model entry or cache-store entry).
struct CandidateDecision {
  int entry = -1;      // index in ModelProto.compiled_tensors; -1 for the cache store
  std::string origin;  // "model" or the cache-store entry folder
  std::string format;  // StructTypeProto.name ("" if the type does not resolve)
  std::string format_version;
  std::string architecture;  // DeviceProto.architecture ("" if the index is bad)
  int format_rank = -1;      // position in PackRequest.formats; -1 = not acceptable
  bool usable = false;       // passed every rule
  bool chosen = false;
  MissReason reason = MissReason::kNotFound;  // meaningful when !usable or !chosen
  std::string detail;
  // How far an incompatible_device candidate got, for the weight's miss (the
  // candidate that got furthest): 0 another machine, device type or an unknown
  // feature; 1 this machine, a feature of the device's architecture missing;
  // 2 the device and format rules passed, the format's kernel needs an ISA the
  // host lacks.
  int incompatible_depth = 0;
};

// A usable entry. `payload` points into the mapped external file (external
// payloads, no copy) or into the model's parsed message (inline raw_data);
// `keep_alive` holds the mapping or the cache-store entry. Inline spans and
// `type` pointers into the model stay valid while the Model lives.
struct Hit {
  int entry = -1;          // index in compiled_tensors; -1 = cache store
  std::string cache_path;  // cache-store entry folder when entry == -1
  int format_index = -1;   // index into PackRequest.formats
  std::span<const uint8_t> payload;
  bool payload_external = false;  // true: mapped from a file
  std::shared_ptr<const void> keep_alive;
  const onnx::StructTypeProto* type = nullptr;  // concrete type, resolved
  std::vector<uint64_t> dims;                   // StructProto.dims
  const onnx::DeviceProto* device = nullptr;
};

struct Resolution {
  std::string source_name;
  std::optional<Hit> hit;                     // set on a hit
  MissReason reason = MissReason::kNotFound;  // on a miss
  std::string detail;                         // on a miss: the message of `reason`
  std::vector<CandidateDecision> candidates;  // model entries first, in file order
  VerifyPolicy policy = VerifyPolicy::kFull;
  bool verified = false;       // the digest was checked (hashed or a trusted memo record)
  bool memo_used = false;      // a memo record replaced hashing
  uint64_t bytes_hashed = 0;   // canonical content hashed for this request
  uint64_t bytes_mapped = 0;   // payload bytes of the hit
  uint64_t bytes_to_pack = 0;  // source bytes the runtime must repack on a miss
  bool is_hit() const { return hit.has_value(); }
};

struct ResolverTotals {
  uint64_t hits = 0, misses = 0;
  uint64_t bytes_hashed = 0, bytes_mapped = 0, bytes_to_pack = 0;
  uint64_t memo_hits = 0;
};

// One resolver per load of one model. Not thread-safe: call resolve() from one
// thread (hashing itself may use options.pool). Holds a reference to `model`,
// which must outlive it and every Hit it returned.
class Resolver {
 public:
  Resolver(const format::Model& model, device::HostDescription host, ResolverOptions options);
  ~Resolver();

  // Applies every rule; never fails (problems are misses with reasons). With
  // ONNX_PREPACK_VERBOSE containing "resolve", prints one line per call to
  // stderr: "onnx-prepack resolve: W1 hit compiled_tensors[0] ..." or the miss reason.
  Resolution resolve(const PackRequest& request);

  // Write-back after the runtime repacked a miss (cache store in read-write
  // mode; a no-op returning ok otherwise). `format` is the format it packed.
  Status store(const PackRequest& request, const AcceptableFormat& format,
               const onnx::StructTypeProto& type, std::span<const uint64_t> dims,
               std::span<const uint8_t> payload);

  // Under `memo`, records are queued while resolving and written here, or when
  // the resolver is destroyed: a load writes them after its first output
  // (the engine calls this once its first run is done). Thread-safe with
  // resolve().
  void flush_memo_records() const;

  // Checker errors that made entries ignored (diagnostics, never fatal).
  const std::vector<check::Diagnostic>& diagnostics() const { return diagnostics_; }
  const ResolverTotals& totals() const { return totals_; }
  const device::HostDescription& host() const { return host_; }
  const ResolverOptions& options() const { return options_; }

 private:
  // A candidate rejected by a rule.
  struct Rejection {
    MissReason reason;
    std::string detail;
  };
  // A model entry that passed every rule but the digest.
  struct Survivor {
    size_t candidate;  // index in Resolution::candidates
    int rank;          // its format's position in PackRequest::formats
    digest::Algorithm algorithm;
    Hit hit;
  };

  // The rules of format.md §4.3, one function per group, in the order they apply.
  Resolution resolve_rules(const PackRequest& request);
  bool request_rules(const PackRequest& request, Resolution& out, int& init_index);
  std::optional<Survivor> examine_entry(const PackRequest& request, const onnx::TensorProto& source,
                                        int idx, Resolution& out);
  std::optional<Rejection> format_rule(const PackRequest& request, const CandidateDecision& c,
                                       const std::string& ctx, int& rank) const;
  std::optional<Rejection> payload_rule(const onnx::CompiledTensorProto& ct, const std::string& ctx,
                                        const std::string& format, Hit& hit) const;
  std::optional<Rejection> digest_fields_rule(const onnx::CompiledTensorProto& ct,
                                              const std::string& ctx,
                                              std::optional<digest::Algorithm>& alg) const;
  Survivor* choose_by_digest(const PackRequest& request, const onnx::TensorProto& source,
                             int init_index, std::vector<Survivor>& survivors, Resolution& out);
  Resolution& miss_from_candidates(const PackRequest& request, Resolution& out);
  Resolution& record_miss(Resolution& out, MissReason r, std::string detail);
  void index_diagnostics();
  std::string invalid_entry_detail(int idx, const std::string& ctx) const;
  Result<digest::Digest> source_digest(const onnx::TensorProto& source, int init_index,
                                       digest::Algorithm algorithm, Resolution& out);
  void try_cache(const PackRequest& request, const onnx::TensorProto& source, int init_index,
                 Resolution& out);
  // The cache key's lineage text for `request` (CacheKey::lineage): each
  // role's content digest under the store's algorithm and each attribute, so
  // a stored lineage-bound pack is found only for equal inputs. Fails when a
  // role's initializer is missing, duplicated, fed or unreadable.
  Result<std::string> lineage_key(const PackRequest& request, Resolution& out);
  // format.md §4.6 on the payload of a candidate about to be chosen (resolver_payload.cc):
  // false after marking `c` corrupt_payload / unverifiable_payload.
  bool payload_ok(const onnx::CompiledTensorProto& entry, const Hit& hit, const std::string& name,
                  CandidateDecision& c, Resolution& out);
  PayloadLocation payload_location(const Hit& hit, const std::string& name) const;
  // Before the first resolve() under `full` or `memo` (resolver_prefetch.cc):
  // hashes the sources and payloads of every entry made for this host, many at
  // once on the pool, so that hashing runs at the machine's all-core rate
  // instead of one tensor at a time; resolve() then consumes the results.
  void prefetch_digests();

  const format::Model& model_;
  device::HostDescription host_;
  ResolverOptions options_;
  std::unique_ptr<MemoStore> memo_;
  std::set<int> invalid_entries_;
  std::vector<check::Diagnostic> diagnostics_;
  std::unordered_map<int, size_t> first_diagnostic_;  // entry -> its first diagnostic
  std::multimap<std::string, int, std::less<>> entries_by_source_;
  // (source name, algorithm) -> digest already computed in this load.
  std::map<std::pair<std::string, int>, digest::Digest> digests_;
  // What prefetch_digests hashed (or found memoised) that no resolution has
  // reported yet: its bytes and memo use go to the first resolution using it.
  struct Prefetched {
    uint64_t bytes_hashed = 0;
    bool memo_used = false;
  };
  std::map<std::pair<std::string, int>, Prefetched> prefetched_sources_;
  std::map<int, PayloadHash> prefetched_payloads_;  // by compiled_tensors index
  bool prefetched_ = false;
  ResolverTotals totals_;
};

}  // namespace onnx_prepack::resolve
