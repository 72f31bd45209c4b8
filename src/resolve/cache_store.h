// Write-back cache store (format.md §7.1): a folder of entries, each a ModelProto
// holding only devices, struct_types and one compiled tensor, its payload in an
// external file at offset 0 (4096-aligned). Entries are published whole by
// renaming a finished temporary folder, writers serialise on an advisory lock,
// and the store keeps under a size bound by evicting least recently used
// entries. Resolve layer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/thread_pool.h"
#include "digest/digest.h"
#include "format/model.h"
#include "onnx_prepack/defaults.hpp"
#include "onnx_prepack/status.h"

namespace onnx_prepack::resolve {

enum class CacheMode { kOff, kReadOnly, kReadWrite };
std::string_view cache_mode_name(CacheMode m);  // "off" / "read-only" / "read-write"
std::optional<CacheMode> cache_mode_from_name(std::string_view name);

// What an entry is filed under: the source content and the reader's format.
struct CacheKey {
  digest::Algorithm algorithm = digest::Algorithm::kBlake3;
  digest::Digest source_digest{};
  std::string format;
  std::string format_version;
  std::string runtime;
  std::string runtime_version;
  // For packs that read other initializers too (format.md §4.5): every role's
  // content digest and every attribute, as text (Resolver::lineage_key);
  // empty for packs of their source alone, whose ids it leaves unchanged.
  std::string lineage;
  std::string id() const;  // 64 hex digits, the entry folder's name
};

// A published entry, mapped. `model` owns the message; `payload` points into
// its mapped data file.
struct CacheEntry {
  std::string path;  // entry folder
  std::shared_ptr<format::Model> model;
  std::span<const uint8_t> payload;
  std::shared_ptr<const void> keep_alive;  // the mapping of the data file
  std::string data_path;                   // entry.data, and its identity when mapped
  base::FileIdentity data_identity;
};

class CacheStore {
 public:
  // The folder is created in read-write mode. max_bytes bounds the sum of the
  // entries' file sizes (0 = unbounded).
  static Result<std::unique_ptr<CacheStore>> open(std::string dir, CacheMode mode,
                                                  uint64_t max_bytes = kDefaultCacheMaxBytes);
  CacheMode mode() const { return mode_; }
  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }

  // The entry filed under `key`, nullopt when absent. An entry that does not
  // parse or whose payload is missing or the wrong size is reported as
  // data_loss (callers treat it as a miss). A read-write store marks the entry
  // used (LRU). Readers take no lock.
  Result<std::optional<CacheEntry>> lookup(const CacheKey& key) const;

  // Publishes an entry (read-write mode only; otherwise failed_precondition as
  // invalid_argument). Takes the writers' lock, writes a temporary folder,
  // fsyncs, renames it into place (an existing entry wins), then evicts to the
  // bound.
  // The entry records payload_digest (format.md §4.6); an existing entry under the
  // key that is damaged (unreadable, wrong size or digest, none recorded) is
  // replaced.
  Status publish(const CacheKey& key, std::string_view source_name, const onnx::DeviceProto& device,
                 const onnx::StructTypeProto& type, std::span<const uint64_t> dims,
                 std::span<const uint8_t> payload, base::ThreadPool* pool = nullptr);

  // Evicts least recently used entries until the total is <= max_bytes and
  // removes temporary folders left by crashed writers. Takes the lock.
  Status evict();
  // Sum of entry sizes now (entries only, not temporaries).
  Result<uint64_t> total_bytes() const;
  Result<std::vector<std::string>> entry_ids() const;

 private:
  CacheStore() = default;
  Status evict_locked();
  // The entry filed under `key` parses, has its payload at the right size and,
  // when it records one, the right payload digest.
  bool entry_is_sound(const CacheKey& key) const;
  std::string dir_;
  CacheMode mode_ = CacheMode::kOff;
  uint64_t max_bytes_ = 0;
};

}  // namespace onnx_prepack::resolve
