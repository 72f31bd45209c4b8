// The resolver (format.md §4.3, 6, 7.2): per pack request, every candidate entry is
// tested rule by rule, cheap rules first and the digest last, so a load hashes
// a source only when some entry for it could otherwise be used. Resolve layer.
#include "resolve/resolver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "base/json.h"
#include "format/metadata.h"
#include "format/tensor_info.h"
#include "types/struct_type.h"

namespace onnx_prepack::resolve {
namespace {

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

using format::metadata_value;

MissReason reason_of(device::DeviceMismatch m) {
  switch (m) {
    case device::DeviceMismatch::kRuntime:
      return MissReason::kUnknownRuntime;
    case device::DeviceMismatch::kRuntimeVersion:
      return MissReason::kRuntimeVersion;
    case device::DeviceMismatch::kMetadata:
      return MissReason::kUnknownMetadata;
    default:
      return MissReason::kIncompatibleDevice;
  }
}

// How far a candidate got through the rules: the miss reported for a weight is
// the one of the candidate that got furthest (ties: earliest entry).
int progress(MissReason r) {
  switch (r) {
    case MissReason::kBadDeviceIndex:
      return 1;
    case MissReason::kInvalidEntry:
      return 2;
    case MissReason::kIncompatibleDevice:
      return 3;
    case MissReason::kUnknownRuntime:
      return 4;
    case MissReason::kRuntimeVersion:
      return 5;
    case MissReason::kUnknownMetadata:
      return 6;
    case MissReason::kUnknownFormat:
      return 7;
    case MissReason::kFormatVersion:
      return 8;
    case MissReason::kFormatMismatch:
      return 9;
    case MissReason::kUnknownAlgorithm:
      return 10;
    case MissReason::kSourceUnreadable:
      return 11;
    case MissReason::kStaleDigest:
      return 12;
    case MissReason::kLineageMismatch:
      return 13;
    case MissReason::kUnverifiablePayload:
      return 14;
    case MissReason::kCorruptPayload:
      return 15;
    default:
      return 0;
  }
}

// A candidate's progress, incompatible_device refined: a device on this machine
// lacking a feature outranks another machine's; a format's missing ISA is found
// after the format name and version rules passed (between format_version and
// format_mismatch).
int progress(const CandidateDecision& c) {
  if (c.reason != MissReason::kIncompatibleDevice) return 2 * progress(c.reason);
  if (c.incompatible_depth >= 2) return 2 * progress(MissReason::kFormatVersion) + 1;
  return 2 * progress(c.reason) + (c.incompatible_depth == 1 ? 1 : 0);
}

// incompatible_depth of a device rule's mismatch.
int incompatible_depth(device::DeviceMismatch m) {
  return m == device::DeviceMismatch::kMissingFeature ? 1 : 0;
}

std::string digest_bytes(const digest::Digest& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

}  // namespace

Resolver::Resolver(const format::Model& model, device::HostDescription host,
                   ResolverOptions options)
    : model_(model), host_(std::move(host)), options_(std::move(options)) {
  if (options_.verify == VerifyPolicy::kMemo) {
    memo_ = std::make_unique<MemoStore>(
        options_.memo_dir.empty() ? MemoStore::default_dir() : options_.memo_dir,
        options_.memo_granularity_ns);
    memo_->set_deferred(true);
  }
  const auto& entries = model_.proto().compiled_tensors();
  for (int i = 0; i < entries.size(); ++i)
    entries_by_source_.emplace(entries.Get(i).source_name(), i);
  if (!entries.empty()) {
    check::CheckReport report = check::check_model(model_);
    invalid_entries_ = std::move(report.invalid_compiled_tensors);
    diagnostics_ = std::move(report.errors);
    index_diagnostics();
  }
}

Resolver::~Resolver() = default;

void Resolver::flush_memo_records() const {
  if (memo_) (void)memo_->flush();  // best effort: a lost record costs one hash
}

// "compiled_tensors[N]" or "compiled_tensors[N].x" -> the first diagnostic of N.
void Resolver::index_diagnostics() {
  constexpr std::string_view kPrefix = "compiled_tensors[";
  for (size_t i = 0; i < diagnostics_.size(); ++i) {
    const std::string& path = diagnostics_[i].path;
    if (path.rfind(kPrefix, 0) != 0) continue;
    const size_t close = path.find(']', kPrefix.size());
    if (close == std::string::npos || close == kPrefix.size() || close - kPrefix.size() > 9)
      continue;
    if (close + 1 != path.size() && path[close + 1] != '.') continue;
    int idx = 0;
    bool digits = true;
    for (size_t k = kPrefix.size(); k < close; ++k) {
      digits = digits && path[k] >= '0' && path[k] <= '9';
      idx = idx * 10 + (path[k] - '0');
    }
    if (digits) first_diagnostic_.emplace(idx, i);  // keeps the first
  }
}

Result<digest::Digest> Resolver::source_digest(const onnx::TensorProto& source, int init_index,
                                               digest::Algorithm algorithm, Resolution& out) {
  const auto cache_key = std::make_pair(source.name(), static_cast<int>(algorithm));
  if (auto it = digests_.find(cache_key); it != digests_.end()) {
    if (auto p = prefetched_sources_.find(cache_key); p != prefetched_sources_.end()) {
      out.bytes_hashed += p->second.bytes_hashed;  // the totals have it already
      out.memo_used = out.memo_used || p->second.memo_used;
      prefetched_sources_.erase(p);
    }
    return it->second;
  }
  std::optional<MemoKey> memo_key;
  if (memo_) {
    // The identity is taken before hashing: a change during hashing alters it.
    Result<MemoKey> key = memo_->key_for(model_, init_index, algorithm);
    if (key.ok()) {
      memo_key = std::move(key).value();
      if (std::optional<digest::Digest> d = memo_->lookup(*memo_key, nullptr)) {
        out.memo_used = true;
        ++totals_.memo_hits;
        digests_.emplace(cache_key, *d);
        return *d;
      }
    }
  }
  digest::DigestOptions opts;
  opts.algorithm = algorithm;
  opts.pool = options_.pool;
  OP_ASSIGN_OR_RETURN(digest::TensorDigest td,
                      digest::digest_tensor(
                          model_, source, format::tensor_context(init_index, source.name()), opts));
  out.bytes_hashed += td.content_bytes;
  totals_.bytes_hashed += td.content_bytes;
  if (memo_key) (void)memo_->record(*memo_key, td.digest);  // best effort: a cache
  digests_.emplace(cache_key, td.digest);
  return td.digest;
}

Resolution Resolver::resolve(const PackRequest& request) {
  static const bool verbose = [] {
    const char* v = std::getenv("ONNX_PREPACK_VERBOSE");
    return v != nullptr && std::string_view(v).find("resolve") != std::string_view::npos;
  }();
  if (!prefetched_) {
    prefetched_ = true;
    if (options_.verify != VerifyPolicy::kOff) prefetch_digests();
  }
  Resolution res = resolve_rules(request);
  if (verbose) {
    if (res.is_hit()) {
      const std::string where = res.hit->entry >= 0
                                    ? "compiled_tensors[" + std::to_string(res.hit->entry) + "]"
                                    : "cache " + res.hit->cache_path;
      std::fprintf(stderr,
                   "onnx-prepack resolve: %s hit %s '%s', %llu bytes mapped, %llu hashed (%s%s)\n",
                   res.source_name.c_str(), where.c_str(), res.hit->type->name().c_str(),
                   (unsigned long long)res.bytes_mapped, (unsigned long long)res.bytes_hashed,
                   std::string(verify_policy_name(res.policy)).c_str(),
                   res.memo_used  ? ", memo"
                   : res.verified ? ""
                                  : ", unverified");
    } else {
      std::fprintf(stderr, "onnx-prepack resolve: %s miss %s: %s\n", res.source_name.c_str(),
                   std::string(miss_reason_id(res.reason)).c_str(), res.detail.c_str());
    }
  }
  return res;
}

Resolution& Resolver::record_miss(Resolution& out, MissReason r, std::string detail) {
  out.reason = r;
  out.detail = std::move(detail);
  ++totals_.misses;
  totals_.bytes_to_pack += out.bytes_to_pack;
  return out;
}

// Request-level rules: a miss lists the entries, each with the request's reason.
bool Resolver::request_rules(const PackRequest& request, Resolution& out, int& init_index) {
  const auto range = entries_by_source_.equal_range(request.source_name);
  auto request_miss = [&](MissReason r, std::string detail) {
    for (auto it = range.first; it != range.second; ++it) {
      CandidateDecision c;
      c.entry = it->second;
      c.origin = "model";
      c.reason = r;
      c.detail = detail;
      out.candidates.push_back(std::move(c));
    }
    record_miss(out, r, std::move(detail));
    return true;
  };
  const int count = model_.count_initializers(request.source_name);
  if (count == 0) {
    return request_miss(MissReason::kNotFound,
                        "no top-level initializer named " + quoted(request.source_name));
  }
  init_index = model_.initializer_index(request.source_name);
  out.bytes_to_pack = format::tensor_byte_size(model_.proto().graph().initializer(init_index));
  if (count > 1) {
    return request_miss(
        MissReason::kDuplicateSource,
        std::to_string(count) + " top-level initializers are named " + quoted(request.source_name));
  }
  if (options_.fed_inputs.count(request.source_name) != 0) {
    return request_miss(MissReason::kOverriddenByInput,
                        "graph input " + quoted(request.source_name) +
                            " is fed in this run and overrides the initializer");
  }
  if (request.lineage) {
    for (const auto& [role, name] : request.lineage->roles) {
      if (!name.empty() && options_.fed_inputs.count(name) != 0) {
        return request_miss(MissReason::kOverriddenByInput,
                            "graph input " + quoted(name) + " (the pack's " + role +
                                ") is fed in this run and overrides the initializer");
      }
    }
  }
  if (request.formats.empty()) {
    return request_miss(MissReason::kNoAcceptableFormat,
                        "the consumer of " + quoted(request.source_name) +
                            " reads no persisted format on this host" +
                            (request.no_format_detail.empty() ? "" : ": ") +
                            request.no_format_detail);
  }
  return false;
}

// The checker's first diagnostic about entry `idx`, found through the index
// built at construction (a search per entry would be quadratic).
std::string Resolver::invalid_entry_detail(int idx, const std::string& ctx) const {
  auto it = first_diagnostic_.find(idx);
  if (it == first_diagnostic_.end()) return ctx + ": fails the checker";
  const check::Diagnostic& d = diagnostics_[it->second];
  return d.path + ": " + d.message + " [" + d.rule + "]";
}

// The entry's format against the request's list: its rank, or a rejection.
std::optional<Resolver::Rejection> Resolver::format_rule(const PackRequest& request,
                                                         const CandidateDecision& c,
                                                         const std::string& ctx, int& rank) const {
  rank = -1;
  bool name_known = false;
  for (size_t r = 0; r < request.formats.size(); ++r) {
    if (request.formats[r].name != c.format) continue;
    name_known = true;
    if (request.formats[r].format_version == c.format_version) {
      rank = static_cast<int>(r);
      break;
    }
  }
  if (!name_known) {
    return Rejection{MissReason::kUnknownFormat, ctx + ": format " + quoted(c.format) +
                                                     " is not one the consumer of " +
                                                     quoted(request.source_name) + " reads"};
  }
  if (rank < 0) {
    std::string versions;
    for (const AcceptableFormat& f : request.formats) {
      if (f.name == c.format) versions += (versions.empty() ? "" : ", ") + quoted(f.format_version);
    }
    return Rejection{MissReason::kFormatVersion, ctx + ": format " + quoted(c.format) +
                                                     " version " + quoted(c.format_version) +
                                                     ", the consumer reads " + versions};
  }
  const AcceptableFormat& fmt = request.formats[static_cast<size_t>(rank)];
  const device::DeviceMatch fm = device::match_architecture(fmt.required_architecture, host_);
  if (!fm.ok()) {
    return Rejection{MissReason::kIncompatibleDevice,
                     "format " + quoted(fmt.name) + " needs " + fm.detail};
  }
  return std::nullopt;
}

// The payload: mapped (external) or in the message, of the size its type gives.
std::optional<Resolver::Rejection> Resolver::payload_rule(const onnx::CompiledTensorProto& ct,
                                                          const std::string& ctx,
                                                          const std::string& format,
                                                          Hit& hit) const {
  const onnx::StructProto& value = ct.value();
  Result<uint64_t> want = types::value_byte_size(model_.proto(), value);
  if (!want.ok()) {
    return Rejection{MissReason::kInvalidEntry, ctx + ".value: " + want.status().message()};
  }
  if (value.external_data_size() > 0) {
    Result<format::ExternalSpan> span =
        model_.resolve_external(value.external_data(), ctx + ".value");
    if (!span.ok()) return Rejection{MissReason::kInvalidEntry, span.status().message()};
    hit.payload = span->bytes();
    hit.payload_external = true;
    hit.keep_alive = span->file;
  } else {
    hit.payload = {reinterpret_cast<const uint8_t*>(value.raw_data().data()),
                   value.raw_data().size()};
  }
  if (hit.payload.size() != *want) {
    return Rejection{MissReason::kInvalidEntry,
                     ctx + ": payload is " + std::to_string(hit.payload.size()) + " bytes, type " +
                         quoted(format) + " needs " + std::to_string(*want)};
  }
  return std::nullopt;
}

// The digest fields: a known algorithm and a digest of its size.
std::optional<Resolver::Rejection> Resolver::digest_fields_rule(
    const onnx::CompiledTensorProto& ct, const std::string& ctx,
    std::optional<digest::Algorithm>& alg) const {
  alg = digest::algorithm_from_name(ct.digest_algorithm());
  if (!alg) {
    return Rejection{MissReason::kUnknownAlgorithm,
                     ctx + ": digest_algorithm " + quoted(ct.digest_algorithm()) +
                         " is not implemented (known: blake3, sha256)"};
  }
  if (ct.source_digest().size() != digest::kDigestSize) {
    return Rejection{MissReason::kInvalidEntry,
                     ctx + ": source_digest is " + std::to_string(ct.source_digest().size()) +
                         " bytes, " + std::string(digest::algorithm_name(*alg)) + " gives " +
                         std::to_string(digest::kDigestSize)};
  }
  return std::nullopt;
}

// Pass 1, one model entry: every rule but the digest, cheapest first. Appends
// the entry's decision to out.candidates; returns it as a survivor when it passes.
std::optional<Resolver::Survivor> Resolver::examine_entry(const PackRequest& request,
                                                          const onnx::TensorProto& source, int idx,
                                                          Resolution& out) {
  const onnx::ModelProto& proto = model_.proto();
  const onnx::CompiledTensorProto& ct = proto.compiled_tensors(idx);
  const std::string ctx = "compiled_tensors[" + std::to_string(idx) + "]";
  CandidateDecision c;
  c.entry = idx;
  c.origin = "model";
  auto reject = [&](Rejection r) -> std::optional<Survivor> {
    c.reason = r.reason;
    c.detail = std::move(r.detail);
    out.candidates.push_back(std::move(c));
    return std::nullopt;
  };
  if (ct.device() < 0 || ct.device() >= proto.devices_size()) {
    return reject({MissReason::kBadDeviceIndex,
                   ctx + ": device " + std::to_string(ct.device()) + " is out of range (" +
                       std::to_string(proto.devices_size()) + " devices)"});
  }
  const onnx::DeviceProto& dev = proto.devices(ct.device());
  c.architecture = dev.architecture();
  Result<const onnx::StructTypeProto*> type = types::value_type(proto, ct.value());
  if (type.ok()) {
    c.format = (*type)->name();
    c.format_version = metadata_value((*type)->metadata_props(), "format_version");
  }
  if (invalid_entries_.count(idx) != 0) {
    return reject({MissReason::kInvalidEntry, invalid_entry_detail(idx, ctx)});
  }
  if (!type.ok()) {
    return reject({MissReason::kInvalidEntry, ctx + ".value: " + type.status().message()});
  }
  const device::DeviceMatch dm =
      device::match_device(dev, host_, options_.runtime_name, options_.runtime_version);
  if (!dm.ok()) {
    c.incompatible_depth = incompatible_depth(dm.mismatch);
    return reject(
        {reason_of(dm.mismatch), "devices[" + std::to_string(ct.device()) + "]: " + dm.detail});
  }
  int rank = -1;
  if (auto r = format_rule(request, c, ctx, rank)) {
    if (r->reason == MissReason::kIncompatibleDevice) c.incompatible_depth = 2;
    return reject(std::move(*r));
  }
  c.format_rank = rank;
  const AcceptableFormat& fmt = request.formats[static_cast<size_t>(rank)];
  std::vector<uint64_t> dims(ct.value().dims().begin(), ct.value().dims().end());
  if (fmt.check_dims) {
    Status s = fmt.check_dims(source, **type, dims);
    if (!s.ok()) return reject({MissReason::kFormatMismatch, ctx + ": " + s.message()});
  }
  Hit hit;
  hit.entry = idx;
  hit.format_index = rank;
  hit.type = *type;
  hit.dims = std::move(dims);
  hit.device = &dev;
  if (auto r = payload_rule(ct, ctx, c.format, hit)) return reject(std::move(*r));
  std::optional<digest::Algorithm> alg;
  if (auto r = digest_fields_rule(ct, ctx, alg)) return reject(std::move(*r));
  c.usable = true;  // provisional: the digest decides
  out.candidates.push_back(std::move(c));
  return Survivor{out.candidates.size() - 1, rank, *alg, std::move(hit)};
}

// Pass 2: the digest, in preference order (format rank, then earliest entry).
// Returns the chosen survivor, or null.
Resolver::Survivor* Resolver::choose_by_digest(const PackRequest& request,
                                               const onnx::TensorProto& source, int init_index,
                                               std::vector<Survivor>& survivors, Resolution& out) {
  std::stable_sort(survivors.begin(), survivors.end(),
                   [](const Survivor& a, const Survivor& b) { return a.rank < b.rank; });
  Survivor* winner = nullptr;
  for (Survivor& s : survivors) {
    CandidateDecision& c = out.candidates[s.candidate];
    const onnx::CompiledTensorProto& ct = model_.proto().compiled_tensors(c.entry);
    const std::string ctx = "compiled_tensors[" + std::to_string(c.entry) + "]";
    if (options_.verify != VerifyPolicy::kOff) {
      Result<digest::Digest> d = source_digest(source, init_index, s.algorithm, out);
      if (!d.ok()) {
        c.usable = false;
        c.reason = MissReason::kSourceUnreadable;
        c.detail = d.status().message();
        continue;
      }
      if (digest_bytes(*d) != ct.source_digest()) {
        c.usable = false;
        c.reason = MissReason::kStaleDigest;
        c.detail = ctx + ": source_digest " +
                   base::hex_lower(reinterpret_cast<const uint8_t*>(ct.source_digest().data()),
                                   ct.source_digest().size())
                       .substr(0, 16) +
                   "... differs from the " + std::string(digest::algorithm_name(s.algorithm)) +
                   " digest of " + quoted(request.source_name) + " now (" +
                   base::hex_lower(d->data(), d->size()).substr(0, 16) + "...)";
        continue;
      }
    }
    if (request.lineage) {  // format.md §4.5: every other source and attribute
      auto bad = check_lineage(
          *request.lineage, ct, model_, options_.verify != VerifyPolicy::kOff,
          [&](const onnx::TensorProto& t, int i) { return source_digest(t, i, s.algorithm, out); });
      if (bad) {
        c.usable = false;
        c.reason = bad->reason;
        c.detail = ctx + ": " + bad->detail;
        continue;
      }
    }
    if (winner == nullptr) {
      if (!payload_ok(ct, s.hit, ctx, c, out)) continue;
      winner = &s;
      c.chosen = true;
    } else {
      c.reason = MissReason::kNotPreferred;
      c.detail = "compiled_tensors[" + std::to_string(winner->hit.entry) + "] is preferred";
    }
  }
  return winner;
}

// The miss after every candidate failed: the one that got furthest, ties to
// the earliest entry.
Resolution& Resolver::miss_from_candidates(const PackRequest& request, Resolution& out) {
  const CandidateDecision* best = nullptr;
  for (const CandidateDecision& c : out.candidates) {
    if (best == nullptr || progress(c) > progress(*best)) best = &c;
  }
  if (best == nullptr) {
    std::string detail = "no compiled entry names " + quoted(request.source_name);
    if (options_.cache != nullptr && options_.cache->mode() != CacheMode::kOff) {
      detail += ", and the cache store has none for its formats";
    }
    return record_miss(out, MissReason::kNotFound, std::move(detail));
  }
  const MissReason r = best->reason;
  std::string detail = best->detail;
  return record_miss(out, r, std::move(detail));
}

Resolution Resolver::resolve_rules(const PackRequest& request) {
  Resolution out;
  out.source_name = request.source_name;
  out.policy = options_.verify;
  int init_index = -1;
  if (request_rules(request, out, init_index)) return out;
  const onnx::TensorProto& source = model_.proto().graph().initializer(init_index);

  std::vector<Survivor> survivors;
  const auto range = entries_by_source_.equal_range(request.source_name);
  for (auto it = range.first; it != range.second; ++it) {
    if (auto s = examine_entry(request, source, it->second, out)) {
      survivors.push_back(std::move(*s));
    }
  }
  if (Survivor* winner = choose_by_digest(request, source, init_index, survivors, out)) {
    out.verified = options_.verify != VerifyPolicy::kOff;
    out.bytes_mapped = winner->hit.payload.size();
    out.bytes_to_pack = 0;
    out.hit = std::move(winner->hit);
    ++totals_.hits;
    totals_.bytes_mapped += out.bytes_mapped;
    return out;
  }
  try_cache(request, source, init_index, out);
  if (out.hit) return out;
  return std::move(miss_from_candidates(request, out));
}

void Resolver::try_cache(const PackRequest& request, const onnx::TensorProto& source,
                         int init_index, Resolution& out) {
  CacheStore* store = options_.cache;
  if (store == nullptr || store->mode() == CacheMode::kOff) return;
  Result<digest::Digest> d = source_digest(source, init_index, options_.cache_algorithm, out);
  if (!d.ok()) return;  // the repack will report the source's problem
  Result<std::string> lineage = lineage_key(request, out);
  if (!lineage.ok()) return;  // no key a store could hold
  for (size_t r = 0; r < request.formats.size(); ++r) {
    const AcceptableFormat& fmt = request.formats[r];
    CacheKey key;
    key.algorithm = options_.cache_algorithm;
    key.source_digest = *d;
    key.lineage = *lineage;
    key.format = fmt.name;
    key.format_version = fmt.format_version;
    key.runtime = options_.runtime_name;
    key.runtime_version = options_.runtime_version;
    Result<std::optional<CacheEntry>> found = store->lookup(key);
    if (found.ok() && !found->has_value()) continue;
    CandidateDecision c;
    c.origin = store->dir() + "/entries/" + key.id();
    c.format = fmt.name;
    c.format_version = fmt.format_version;
    c.format_rank = static_cast<int>(r);
    if (!found.ok()) {
      c.reason = MissReason::kInvalidEntry;
      c.detail = found.status().message();
      out.candidates.push_back(std::move(c));
      continue;
    }
    CacheEntry& entry = **found;
    const onnx::ModelProto& p = entry.model->proto();
    const onnx::DeviceProto& dev = p.devices(0);
    c.architecture = dev.architecture();
    const device::DeviceMatch dm =
        device::match_device(dev, host_, options_.runtime_name, options_.runtime_version);
    const device::DeviceMatch fm = device::match_architecture(fmt.required_architecture, host_);
    if (!dm.ok() || !fm.ok()) {
      c.reason = dm.ok() ? MissReason::kIncompatibleDevice : reason_of(dm.mismatch);
      c.incompatible_depth = dm.ok() ? 2 : incompatible_depth(dm.mismatch);
      c.detail = dm.ok() ? "format " + quoted(fmt.name) + " needs " + fm.detail : dm.detail;
      out.candidates.push_back(std::move(c));
      continue;
    }
    const onnx::StructProto& value = p.compiled_tensors(0).value();
    Result<const onnx::StructTypeProto*> type = types::value_type(p, value);
    if (!type.ok()) {
      c.reason = MissReason::kInvalidEntry;
      c.detail = c.origin + ": " + type.status().message();
      out.candidates.push_back(std::move(c));
      continue;
    }
    std::vector<uint64_t> dims(value.dims().begin(), value.dims().end());
    if (fmt.check_dims) {
      Status s = fmt.check_dims(source, **type, dims);
      if (!s.ok()) {
        c.reason = MissReason::kFormatMismatch;
        c.detail = c.origin + ": " + s.message();
        out.candidates.push_back(std::move(c));
        continue;
      }
    }
    Hit hit;
    hit.entry = -1;
    hit.cache_path = entry.path;
    hit.format_index = static_cast<int>(r);
    hit.payload = entry.payload;
    hit.payload_external = true;
    hit.type = *type;
    hit.dims = std::move(dims);
    hit.device = &dev;
    // Keep both the message (type, device) and the mapping alive.
    auto holder = std::make_shared<CacheEntry>(std::move(entry));
    hit.keep_alive = holder;
    const onnx::CompiledTensorProto& ct = p.compiled_tensors(0);
    if (!payload_ok(ct, hit, c.origin, c, out)) {
      out.candidates.push_back(std::move(c));
      continue;  // the repack's write-back replaces the damaged entry
    }
    c.usable = true;
    c.chosen = true;
    out.candidates.push_back(std::move(c));
    out.verified = true;  // the key is the digest just computed or trusted
    out.bytes_mapped = hit.payload.size();
    out.bytes_to_pack = 0;
    out.hit = std::move(hit);
    ++totals_.hits;
    totals_.bytes_mapped += out.bytes_mapped;
    return;
  }
}

Status Resolver::store(const PackRequest& request, const AcceptableFormat& format,
                       const onnx::StructTypeProto& type, std::span<const uint64_t> dims,
                       std::span<const uint8_t> payload) {
  CacheStore* store = options_.cache;
  if (store == nullptr || store->mode() != CacheMode::kReadWrite) return ok_status();
  const int init_index = model_.initializer_index(request.source_name);
  if (init_index < 0 || model_.count_initializers(request.source_name) != 1 ||
      options_.fed_inputs.count(request.source_name) != 0) {
    return ok_status();  // nothing a later load could match
  }
  const onnx::TensorProto& source = model_.proto().graph().initializer(init_index);
  Resolution scratch;
  OP_ASSIGN_OR_RETURN(digest::Digest d,
                      source_digest(source, init_index, options_.cache_algorithm, scratch));
  Result<std::string> lineage = lineage_key(request, scratch);
  if (!lineage.ok()) return ok_status();  // nothing a later load could match
  CacheKey key;
  key.algorithm = options_.cache_algorithm;
  key.source_digest = d;
  key.lineage = std::move(*lineage);
  key.format = format.name;
  key.format_version = format.format_version;
  key.runtime = options_.runtime_name;
  key.runtime_version = options_.runtime_version;
  onnx::DeviceProto dev;
  dev.set_type(host_.device_type);
  dev.set_architecture(format.required_architecture.empty()
                           ? std::string(device::machine_name(host_.architecture.machine))
                           : format.required_architecture);
  dev.set_runtime(options_.runtime_name);
  dev.set_runtime_version(options_.runtime_version);
  onnx::StructTypeProto t = type;
  return store->publish(key, request.source_name, dev, t, dims, payload, options_.pool);
}

Result<std::string> Resolver::lineage_key(const PackRequest& request, Resolution& out) {
  if (!request.lineage) return std::string();
  std::string text;
  for (const auto& [role, name] : request.lineage->roles) {
    text += "role " + role + '=';
    if (name.empty()) {  // an absent optional input
      text += "-\n";
      continue;
    }
    if (model_.count_initializers(name) != 1 || options_.fed_inputs.count(name) != 0) {
      return not_found("lineage " + role + " " + quoted(name) +
                       " is not one unfed top-level initializer");
    }
    const int idx = model_.initializer_index(name);
    OP_ASSIGN_OR_RETURN(digest::Digest d, source_digest(model_.proto().graph().initializer(idx),
                                                        idx, options_.cache_algorithm, out));
    text += base::hex_lower(d.data(), d.size()) + '\n';
  }
  for (const auto& [attr, value] : request.lineage->attrs)
    text += "attr " + attr + '=' + value + '\n';
  return text;
}

}  // namespace onnx_prepack::resolve
