#include "resolve/payload_check.h"

#include <chrono>

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
    if (e.key() == kPayloadDigestKey) found = parse_hex_digest(e.value(), out.digest);
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

bool copied_payload_intact(const onnx::CompiledTensorProto& entry, std::span<const uint8_t> payload,
                           base::ThreadPool* pool) {
  bool has = false;
  for (const auto& e : entry.metadata_props()) has = has || e.key() == kPayloadDigestKey;
  if (!has) return true;
  return check_payload(entry.metadata_props(), entry.digest_algorithm(), payload, true, nullptr, {},
                       pool, "")
             .verdict == PayloadVerdict::kIntact;
}

std::string payload_digest_hex(digest::Algorithm algorithm, std::span<const uint8_t> payload,
                               base::ThreadPool* pool) {
  const digest::Digest d = digest::hash_bytes(algorithm, {&payload, 1}, pool);
  return base::hex_lower(d.data(), d.size());
}

void set_payload_digest(MetadataEntries& metadata, digest::Algorithm algorithm,
                        std::span<const uint8_t> payload, base::ThreadPool* pool) {
  const std::string hex = payload_digest_hex(algorithm, payload, pool);
  for (auto& e : metadata) {
    if (e.key() == kPayloadDigestKey) {
      e.set_value(hex);
      return;
    }
  }
  onnx::StringStringEntryProto* e = metadata.Add();
  e->set_key(std::string(kPayloadDigestKey));
  e->set_value(hex);
}

PayloadCheck check_payload(const MetadataEntries& metadata, std::string_view algorithm_name,
                           std::span<const uint8_t> payload, bool hash, const MemoStore* memo,
                           const PayloadLocation& where, base::ThreadPool* pool,
                           std::string_view context) {
  PayloadCheck out;
  if (!hash) {
    out.verdict = PayloadVerdict::kUnchecked;
    return out;
  }
  const std::string ctx(context);
  const std::optional<digest::Algorithm> alg = digest::algorithm_from_name(algorithm_name);
  int found = 0;
  std::string recorded;
  for (const auto& e : metadata) {
    if (e.key() == kPayloadDigestKey) {
      ++found;
      recorded = e.value();
    }
  }
  if (found == 0 || !alg) {
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
  std::optional<MemoKey> key;
  if (memo != nullptr) {
    key = payload_memo_key(where, *alg);
    if (key) {
      if (std::optional<digest::Digest> d = memo->lookup(*key, nullptr)) {
        if (base::hex_lower(d->data(), d->size()) == recorded) {
          out.memo_used = true;
          return out;
        }
      }
    }
  }
  const digest::Digest d = digest::hash_bytes(*alg, {&payload, 1}, pool);
  out.bytes_hashed = payload.size();
  const std::string now = base::hex_lower(d.data(), d.size());
  if (now != recorded) {
    out.verdict = PayloadVerdict::kCorrupt;
    out.detail = ctx + ": payload digest " + now.substr(0, 16) +
                 "... differs from payload_digest " + recorded.substr(0, 16) + "...";
    return out;
  }
  if (key) (void)memo->record(*key, d);  // best effort, like source records
  return out;
}

}  // namespace onnx_prepack::resolve
