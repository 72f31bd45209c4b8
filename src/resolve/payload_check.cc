#include "resolve/payload_check.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "base/json.h"
#include "format/metadata.h"

namespace onnx_prepack::resolve {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A memo key for a payload range; none when the file changed since mapping.
std::optional<MemoKey> payload_memo_key(const PayloadLocation& where, digest::Algorithm algorithm) {
  if (where.path.empty()) return std::nullopt;
  MemoKey key;
  key.stat_time_ns = now_ns();
  Result<base::FileIdentity> now = base::stat_identity(where.path);
  if (!now.ok()) return std::nullopt;
  const base::FileIdentity& then = where.identity;
  if (now->device != then.device || now->inode != then.inode || now->size != then.size ||
      now->mtime_ns != then.mtime_ns || now->ctime_ns != then.ctime_ns) {
    return std::nullopt;
  }
  key.file = *now;
  key.offset = where.offset;
  key.length = where.length;
  key.tensor = "payload:" + where.name;  // never an initializer's key
  key.algorithm = algorithm;
  key.file_path = where.path;
  return key;
}

bool parse_hex_digest(std::string_view hex, digest::Digest& out) {
  if (hex.size() != 2 * out.size()) return false;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = nib(hex[2 * i]), lo = nib(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = uint8_t(hi * 16 + lo);
  }
  return true;
}

}  // namespace

Result<PayloadMemo> payload_memo_for(const format::Model& model, int index) {
  const auto& cts = model.proto().compiled_tensors();
  if (index < 0 || index >= cts.size()) return out_of_range("compiled tensor index out of range");
  const onnx::CompiledTensorProto& ct = cts.Get(index);
  const std::string ctx = "compiled_tensors[" + std::to_string(index) + "]";
  const std::optional<digest::Algorithm> alg = digest::algorithm_from_name(ct.digest_algorithm());
  PayloadMemo out;
  bool found = false;
  for (const auto& e : ct.metadata_props()) {
    digest::Digest parsed{};
    if (e.key() == kPayloadDigestKey && parse_hex_digest(e.value(), parsed)) {
      found = true;
      out.recorded = e.value();
    }
  }
  if (!alg || !found || ct.value().external_data_size() == 0) {
    return invalid_argument(ctx + ": no external payload with a payload_digest to record");
  }
  OP_ASSIGN_OR_RETURN(format::ExternalSpan span,
                      model.resolve_external(ct.value().external_data(), ctx + ".value"));
  PayloadLocation where;
  where.path = span.file->path();
  where.identity = span.file->identity();
  where.offset = span.offset;
  where.length = span.length;
  where.name = ctx;
  std::optional<MemoKey> key = payload_memo_key(where, *alg);
  if (!key) return data_loss(ctx + ": '" + where.path + "' changed since it was mapped");
  out.key = std::move(*key);
  return out;
}

bool copied_payload_intact(const onnx::ModelProto& model, const onnx::CompiledTensorProto& entry,
                           std::span<const uint8_t> payload, base::ThreadPool* pool,
                           std::optional<digest::Digest>* inner) {
  bool has = false;
  for (const auto& e : entry.metadata_props()) has = has || e.key() == kPayloadDigestKey;
  if (!has) return true;
  const PayloadCheck pc =
      check_payload(entry, entry_struct_type(model, entry), payload, true, nullptr, {}, pool, "");
  if (inner != nullptr) *inner = pc.inner;
  return pc.verdict == PayloadVerdict::kIntact;
}

const onnx::StructTypeProto* entry_struct_type(const onnx::ModelProto& model,
                                               const onnx::CompiledTensorProto& entry) {
  const onnx::StructProto& v = entry.value();
  if (v.type() == -1 && v.has_struct_type()) return &v.struct_type();
  if (v.type() >= 0 && v.type() < model.struct_types_size()) return &model.struct_types(v.type());
  return nullptr;
}

std::string payload_binding(const onnx::CompiledTensorProto& entry,
                            const onnx::StructTypeProto& type) {
  std::string b;
  auto put_u32 = [&](uint64_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(char(uint8_t(v >> (8 * i))));
  };
  auto put_u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(char(uint8_t(v >> (8 * i))));
  };
  auto put_str = [&](std::string_view s) {
    put_u32(s.size());
    b.append(s);
  };
  put_str(entry.source_digest());
  put_str(type.name());
  put_str(format::metadata_value(type.metadata_props(), "format_version"));
  put_u32(uint64_t(entry.value().dims_size()));
  for (uint64_t d : entry.value().dims()) put_u64(d);
  std::vector<std::pair<std::string_view, std::string_view>> lineage;
  for (const auto& e : entry.metadata_props()) {
    const std::string_view k = e.key();
    if (k.starts_with("lineage.") || k.starts_with("attr.")) lineage.emplace_back(k, e.value());
  }
  std::sort(lineage.begin(), lineage.end());
  put_u32(lineage.size());
  for (const auto& [k, v] : lineage) {
    put_str(k);
    put_str(v);
  }
  return b;
}

digest::Digest bound_payload_digest(digest::Algorithm algorithm, std::string_view binding,
                                    const digest::Digest& inner) {
  static constexpr char kPrefix[] = "onnx-prepack-payload-v1";  // with its 0x00
  const std::span<const uint8_t> parts[3] = {
      {reinterpret_cast<const uint8_t*>(kPrefix), sizeof kPrefix},
      {reinterpret_cast<const uint8_t*>(binding.data()), binding.size()},
      {inner.data(), inner.size()}};
  return digest::hash_bytes(algorithm, parts);
}

digest::Digest set_payload_digest(onnx::CompiledTensorProto& entry,
                                  const onnx::StructTypeProto& type, digest::Algorithm algorithm,
                                  std::span<const uint8_t> payload, base::ThreadPool* pool) {
  const digest::Digest inner = digest::hash_bytes(algorithm, {&payload, 1}, pool);
  const digest::Digest d = bound_payload_digest(algorithm, payload_binding(entry, type), inner);
  const std::string hex = base::hex_lower(d.data(), d.size());
  MetadataEntries& metadata = *entry.mutable_metadata_props();
  for (auto& e : metadata) {
    if (e.key() == kPayloadDigestKey) {
      e.set_value(hex);
      return inner;
    }
  }
  auto* e = metadata.Add();
  e->set_key(std::string(kPayloadDigestKey));
  e->set_value(hex);
  return inner;
}

PayloadHash hash_payload(std::span<const uint8_t> payload, digest::Algorithm algorithm,
                         const MemoStore* memo, const PayloadLocation& where,
                         base::ThreadPool* pool) {
  PayloadHash h;
  if (memo != nullptr) {
    // The identity is taken before hashing: a change during hashing alters it.
    h.memo_key = payload_memo_key(where, algorithm);
    if (h.memo_key) {
      if (std::optional<digest::Digest> d = memo->lookup(*h.memo_key, nullptr)) {
        h.inner = *d;
        h.memo_used = true;
        return h;
      }
    }
  }
  // Hashed whole: its page tables filled in one call, not 16 pages per fault.
  base::populate_read(payload.data(), payload.size());
  h.inner = digest::hash_bytes(algorithm, {&payload, 1}, pool);
  h.bytes_hashed = payload.size();
  return h;
}

PayloadCheck check_payload(const onnx::CompiledTensorProto& entry,
                           const onnx::StructTypeProto* type, std::span<const uint8_t> payload,
                           bool hash, const MemoStore* memo, const PayloadLocation& where,
                           base::ThreadPool* pool, std::string_view context,
                           const PayloadHash* hashed) {
  PayloadCheck out;
  if (!hash) {
    out.verdict = PayloadVerdict::kUnchecked;
    return out;
  }
  const std::string ctx(context);
  const std::optional<digest::Algorithm> alg =
      digest::algorithm_from_name(entry.digest_algorithm());
  int found = 0;
  std::string recorded;
  for (const auto& e : entry.metadata_props()) {
    if (e.key() == kPayloadDigestKey) {
      ++found;
      recorded = e.value();
    }
  }
  if (found == 0 || !alg || type == nullptr) {
    out.verdict = PayloadVerdict::kUnverifiable;
    out.detail = ctx + ": no payload_digest, the payload cannot be verified";
    return out;
  }
  if (found > 1 || recorded.size() != 2 * digest::kDigestSize) {
    out.verdict = PayloadVerdict::kCorrupt;
    out.detail = ctx + ": payload_digest is not one " + std::to_string(2 * digest::kDigestSize) +
                 "-digit hex digest";
    return out;
  }
  const std::string binding = payload_binding(entry, *type);
  auto bound_hex = [&](const digest::Digest& inner) {
    const digest::Digest d = bound_payload_digest(*alg, binding, inner);
    return base::hex_lower(d.data(), d.size());
  };
  PayloadHash h = hashed != nullptr ? *hashed : hash_payload(payload, *alg, memo, where, pool);
  out.bytes_hashed += h.bytes_hashed;
  if (h.memo_used && bound_hex(h.inner) != recorded) {
    // A record for this range that the entry does not match: hash the bytes themselves.
    std::optional<MemoKey> key = std::move(h.memo_key);
    h = hash_payload(payload, *alg, nullptr, where, pool);
    h.memo_key = std::move(key);
    out.bytes_hashed += h.bytes_hashed;
  }
  out.memo_used = h.memo_used;
  out.inner = h.inner;
  const std::string now = bound_hex(h.inner);
  if (now != recorded) {
    out.verdict = PayloadVerdict::kCorrupt;
    out.detail = ctx + ": payload digest " + now.substr(0, 16) +
                 "... differs from payload_digest " + recorded.substr(0, 16) +
                 "... (payload bytes, or the source, format, dims or lineage it was written for)";
    return out;
  }
  if (memo != nullptr && h.memo_key && !h.memo_used) {
    (void)memo->record(*h.memo_key, h.inner);  // best effort, like source records
  }
  return out;
}

}  // namespace onnx_prepack::resolve
