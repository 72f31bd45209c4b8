// Write-back cache store (format.md §7.1). Layout under the store folder:
//   lock                     advisory flock held by writers (publish, evict)
//   entries/<id>/entry.onnx  ModelProto: devices[0], struct_types[0], compiled_tensors[0]
//   entries/<id>/entry.data  the payload at offset 0 (so 4096-aligned)
//   tmp/                     folders being written; any found under the lock are a
//                            crashed writer's and are removed
// An entry appears by rename(2) of a complete, fsynced folder, so readers see
// all of it or nothing. The mtime of entry.onnx is the last use (LRU).
// Resolve layer.
#include "resolve/cache_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "base/json.h"
#include "format/metadata.h"
#include "resolve/payload_check.h"
#include "types/struct_type.h"

namespace onnx_prepack::resolve {
namespace fs = std::filesystem;
namespace {

constexpr const char* kEntryModel = "entry.onnx";
constexpr const char* kEntryData = "entry.data";

Status errno_status(const std::string& what, const std::string& path) {
  return io_error(path + ": " + what + ": " + std::strerror(errno));
}

// Holds the writers' lock for its lifetime.
class WriterLock {
 public:
  static Result<WriterLock> acquire(const std::string& dir) {
    WriterLock l;
    const std::string path = dir + "/lock";
    l.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (l.fd_ < 0) return errno_status("cannot open lock file", path);
    while (::flock(l.fd_, LOCK_EX) != 0) {
      if (errno != EINTR) return errno_status("cannot lock", path);
    }
    return l;
  }
  WriterLock(WriterLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  WriterLock& operator=(WriterLock&&) = delete;
  ~WriterLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
  }

 private:
  WriterLock() = default;
  int fd_ = -1;
};

Status write_file_synced(const std::string& path, std::span<const uint8_t> bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("cannot create", path);
  const uint8_t* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, std::min<size_t>(left, size_t(1) << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = errno_status("cannot write", path);
      ::close(fd);
      return s;
    }
    p += n;
    left -= size_t(n);
  }
  if (::fsync(fd) != 0) {
    Status s = errno_status("cannot fsync", path);
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return errno_status("cannot close", path);
  return ok_status();
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

using format::metadata_value;

struct EntryInfo {
  std::string id;
  uint64_t bytes = 0;
  int64_t last_used_ns = 0;
};

}  // namespace

std::string_view cache_mode_name(CacheMode m) {
  switch (m) {
    case CacheMode::kOff:
      return "off";
    case CacheMode::kReadOnly:
      return "read-only";
    case CacheMode::kReadWrite:
      return "read-write";
  }
  return "off";
}

std::optional<CacheMode> cache_mode_from_name(std::string_view name) {
  if (name == "off") return CacheMode::kOff;
  if (name == "read-only") return CacheMode::kReadOnly;
  if (name == "read-write") return CacheMode::kReadWrite;
  return std::nullopt;
}

std::string CacheKey::id() const {
  // Length-prefixed fields, so no two keys share a message.
  std::string msg = "onnx-prepack-cache-key-v1";
  auto add = [&](std::string_view s) {
    msg += std::to_string(s.size());
    msg += ':';
    msg += s;
  };
  add(digest::algorithm_name(algorithm));
  add(std::string_view(reinterpret_cast<const char*>(source_digest.data()), source_digest.size()));
  add(format);
  add(format_version);
  add(runtime);
  add(runtime_version);
  if (!lineage.empty()) add(lineage);
  const std::span<const uint8_t> part(reinterpret_cast<const uint8_t*>(msg.data()), msg.size());
  const digest::Digest d = digest::hash_bytes(digest::Algorithm::kBlake3, {&part, 1});
  return base::hex_lower(d.data(), d.size());
}

Result<std::unique_ptr<CacheStore>> CacheStore::open(std::string dir, CacheMode mode,
                                                     uint64_t max_bytes) {
  if (dir.empty()) return invalid_argument("cache store: empty folder name");
  std::unique_ptr<CacheStore> store(new CacheStore());
  store->dir_ = std::move(dir);
  store->mode_ = mode;
  store->max_bytes_ = max_bytes;
  if (mode == CacheMode::kReadWrite) {
    std::error_code ec;
    fs::create_directories(store->dir_ + "/entries", ec);
    if (!ec) fs::create_directories(store->dir_ + "/tmp", ec);
    if (ec) return io_error(store->dir_ + ": cannot create cache store: " + ec.message());
  }
  return store;
}

Result<std::optional<CacheEntry>> CacheStore::lookup(const CacheKey& key) const {
  if (mode_ == CacheMode::kOff) return std::optional<CacheEntry>();
  const std::string entry_dir = dir_ + "/entries/" + key.id();
  const std::string model_path = entry_dir + "/" + kEntryModel;
  struct stat st;
  if (::stat(model_path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<CacheEntry>();
    return errno_status("cannot stat", model_path);
  }
  Result<std::unique_ptr<format::Model>> loaded = format::Model::load(model_path);
  if (!loaded.ok()) {
    // Evicted between stat and open: absent, not corrupt.
    if (::access(entry_dir.c_str(), F_OK) != 0) return std::optional<CacheEntry>();
    return data_loss(model_path + ": " + loaded.status().message());
  }
  std::shared_ptr<format::Model> model(std::move(loaded).value());
  const onnx::ModelProto& p = model->proto();
  if (p.compiled_tensors_size() != 1 || p.devices_size() != 1) {
    return data_loss(model_path + ": a cache entry holds 1 device and 1 compiled tensor, found " +
                     std::to_string(p.devices_size()) + " and " +
                     std::to_string(p.compiled_tensors_size()));
  }
  const onnx::CompiledTensorProto& ct = p.compiled_tensors(0);
  if (ct.device() != 0) return data_loss(model_path + ": compiled_tensors[0].device is not 0");
  OP_ASSIGN_OR_RETURN(const onnx::StructTypeProto* type, types::value_type(p, ct.value()));
  const bool key_ok =
      ct.digest_algorithm() == digest::algorithm_name(key.algorithm) &&
      ct.source_digest() == std::string(reinterpret_cast<const char*>(key.source_digest.data()),
                                        key.source_digest.size()) &&
      type->name() == key.format &&
      metadata_value(type->metadata_props(), "format_version") == key.format_version &&
      p.devices(0).runtime() == key.runtime &&
      p.devices(0).runtime_version() == key.runtime_version;
  if (!key_ok) return data_loss(model_path + ": entry does not match its key " + key.id());
  OP_ASSIGN_OR_RETURN(uint64_t want, types::value_byte_size(p, ct.value()));
  if (ct.value().external_data_size() == 0) {
    return data_loss(model_path + ": compiled_tensors[0] payload is not external");
  }
  Result<format::ExternalSpan> span =
      model->resolve_external(ct.value().external_data(), "compiled_tensors[0].value");
  if (!span.ok()) {
    if (::access(entry_dir.c_str(), F_OK) != 0) return std::optional<CacheEntry>();
    return data_loss(model_path + ": " + span.status().message());
  }
  if (span->length != want) {
    return data_loss(model_path + ": payload is " + std::to_string(span->length) +
                     " bytes, type '" + type->name() + "' needs " + std::to_string(want));
  }
  if (mode_ == CacheMode::kReadWrite) {
    ::utimensat(AT_FDCWD, model_path.c_str(), nullptr, 0);  // mark used; best effort
  }
  CacheEntry entry;
  entry.path = entry_dir;
  entry.payload = span->bytes();
  entry.keep_alive = span->file;
  entry.data_path = span->file->path();
  entry.data_identity = span->file->identity();
  entry.model = std::move(model);
  return std::optional<CacheEntry>(std::move(entry));
}

Status CacheStore::publish(const CacheKey& key, std::string_view source_name,
                           const onnx::DeviceProto& device, const onnx::StructTypeProto& type,
                           std::span<const uint64_t> dims, std::span<const uint8_t> payload,
                           base::ThreadPool* pool) {
  if (mode_ != CacheMode::kReadWrite) {
    return invalid_argument(dir_ + ": cache store is " + std::string(cache_mode_name(mode_)) +
                            ", publishing needs read-write");
  }
  if (max_bytes_ != 0 && payload.size() > max_bytes_) {
    return resource_exhausted(dir_ + ": entry of " + std::to_string(payload.size()) +
                              " bytes exceeds the store bound of " + std::to_string(max_bytes_));
  }
  const std::string id = key.id();
  const std::string final_dir = dir_ + "/entries/" + id;

  onnx::ModelProto m;
  *m.add_devices() = device;
  *m.add_struct_types() = type;
  onnx::CompiledTensorProto* ct = m.add_compiled_tensors();
  ct->set_source_name(std::string(source_name));
  ct->set_device(0);
  ct->set_source_digest(std::string(reinterpret_cast<const char*>(key.source_digest.data()),
                                    key.source_digest.size()));
  ct->set_digest_algorithm(std::string(digest::algorithm_name(key.algorithm)));
  onnx::StructProto* v = ct->mutable_value();
  v->set_type(0);
  for (uint64_t d : dims) v->add_dims(d);
  auto add_kv = [&](const char* k, std::string val) {
    onnx::StringStringEntryProto* e = v->add_external_data();
    e->set_key(k);
    e->set_value(std::move(val));
  };
  add_kv("location", kEntryData);
  add_kv("offset", "0");
  add_kv("length", std::to_string(payload.size()));
  set_payload_digest(*ct, type, key.algorithm, payload, pool);
  OP_ASSIGN_OR_RETURN(uint64_t want, types::value_byte_size(m, *v));
  if (want != payload.size()) {
    return invalid_argument("cache entry for '" + std::string(source_name) + "': payload is " +
                            std::to_string(payload.size()) + " bytes, type '" + type.name() +
                            "' needs " + std::to_string(want));
  }
  std::string serialized;
  if (!m.SerializeToString(&serialized)) return internal_error("cannot serialise a cache entry");

  OP_ASSIGN_OR_RETURN(WriterLock lock, WriterLock::acquire(dir_));
  if (::access(final_dir.c_str(), F_OK) == 0) {
    if (entry_is_sound(key)) return ok_status();  // an equal, intact entry exists
    // A truncated, corrupt or unreadable entry would be a miss forever: replace
    // it. Renamed away first, so readers see the old entry or none.
    const std::string away = dir_ + "/tmp/replaced." + id + "." + std::to_string(::getpid());
    if (::rename(final_dir.c_str(), away.c_str()) != 0) {
      return errno_status("cannot replace the damaged entry", final_dir);
    }
    std::error_code ec;
    fs::remove_all(away, ec);
  }
  std::random_device rd;
  const std::string tmp =
      dir_ + "/tmp/" + id + "." + std::to_string(::getpid()) + "." + std::to_string(rd());
  if (::mkdir(tmp.c_str(), 0755) != 0) return errno_status("cannot create", tmp);
  Status s = write_file_synced(tmp + "/" + kEntryData, payload);
  if (s.ok()) {
    s = write_file_synced(tmp + "/" + kEntryModel,
                          {reinterpret_cast<const uint8_t*>(serialized.data()), serialized.size()});
  }
  if (s.ok()) {
    fsync_dir(tmp);
    if (::rename(tmp.c_str(), final_dir.c_str()) != 0)
      s = errno_status("cannot rename onto", final_dir);
  }
  if (!s.ok()) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    return s;
  }
  fsync_dir(dir_ + "/entries");
  return evict_locked();
}

bool CacheStore::entry_is_sound(const CacheKey& key) const {
  Result<std::optional<CacheEntry>> found = lookup(key);
  if (!found.ok() || !found->has_value()) return false;
  const onnx::ModelProto& m = (*found)->model->proto();
  const onnx::CompiledTensorProto& ct = m.compiled_tensors(0);
  return check_payload(ct, entry_struct_type(m, ct), (*found)->payload, true, nullptr, {}, nullptr,
                       (*found)->path)
             .verdict == PayloadVerdict::kIntact;
}

Status CacheStore::evict() {
  if (mode_ != CacheMode::kReadWrite) {
    return invalid_argument(dir_ + ": cache store is " + std::string(cache_mode_name(mode_)) +
                            ", eviction needs read-write");
  }
  OP_ASSIGN_OR_RETURN(WriterLock lock, WriterLock::acquire(dir_));
  return evict_locked();
}

Status CacheStore::evict_locked() {
  std::error_code ec;
  // Under the lock no writer is active: whatever is in tmp/ is a crashed writer's.
  for (const auto& e : fs::directory_iterator(dir_ + "/tmp", ec)) fs::remove_all(e.path(), ec);
  if (max_bytes_ == 0) return ok_status();
  std::vector<EntryInfo> entries;
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir_ + "/entries", ec)) {
    EntryInfo info;
    info.id = e.path().filename().string();
    struct stat st;
    const std::string base = e.path().string() + "/";
    if (::stat((base + kEntryModel).c_str(), &st) == 0) {
      info.bytes += uint64_t(st.st_size);
      info.last_used_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    }
    if (::stat((base + kEntryData).c_str(), &st) == 0) info.bytes += uint64_t(st.st_size);
    total += info.bytes;
    entries.push_back(std::move(info));
  }
  if (ec) return io_error(dir_ + "/entries: cannot list: " + ec.message());
  std::sort(entries.begin(), entries.end(), [](const EntryInfo& a, const EntryInfo& b) {
    return a.last_used_ns != b.last_used_ns ? a.last_used_ns < b.last_used_ns : a.id < b.id;
  });
  for (const EntryInfo& e : entries) {
    if (total <= max_bytes_) break;
    // Rename first so readers never open a half-deleted entry.
    const std::string from = dir_ + "/entries/" + e.id;
    const std::string to = dir_ + "/tmp/evict." + e.id + "." + std::to_string(::getpid());
    if (::rename(from.c_str(), to.c_str()) != 0) return errno_status("cannot evict", from);
    fs::remove_all(to, ec);
    total -= e.bytes;
  }
  return ok_status();
}

Result<uint64_t> CacheStore::total_bytes() const {
  std::error_code ec;
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir_ + "/entries", ec)) {
    for (const char* f : {kEntryModel, kEntryData}) {
      struct stat st;
      const std::string p = e.path().string() + "/" + f;
      if (::stat(p.c_str(), &st) == 0) total += uint64_t(st.st_size);
    }
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return io_error(dir_ + "/entries: cannot list: " + ec.message());
  }
  return total;
}

Result<std::vector<std::string>> CacheStore::entry_ids() const {
  std::error_code ec;
  std::vector<std::string> ids;
  for (const auto& e : fs::directory_iterator(dir_ + "/entries", ec)) {
    ids.push_back(e.path().filename().string());
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return io_error(dir_ + "/entries: cannot list: " + ec.message());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace onnx_prepack::resolve
