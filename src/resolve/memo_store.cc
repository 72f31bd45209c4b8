// Memo store of source digests (format.md §7.2). One small text record per key in
// the memo folder, written atomically; a record is trusted only for the exact
// file identity and byte range, and only when taken at least the timestamp
// granularity after the file's last change. Resolve layer.
#include "resolve/memo_store.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "base/atomic_file.h"
#include "base/json.h"

namespace onnx_prepack::resolve {
namespace {

constexpr int64_t kFineGranularityNs = 20'000'000;       // coarse kernel clock tick, with margin
constexpr int64_t kCoarseGranularityNs = 2'000'000'000;  // FAT and whole-second file systems
constexpr uint64_t kMaxRecordBytes = 64 * 1024;
// Version 2 adds the `check` line: records are published without fsync
// (base::Durability::kRebuildable), so a record torn by a power loss must be
// recognised, and is, as "record is corrupt" (then the range is hashed again).
constexpr std::string_view kMagic = "onnx-prepack-memo 2";

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Everything that identifies the record, one "key value" per line.
std::string key_text(const MemoKey& k) {
  std::ostringstream o;
  o << kMagic << "\n"
    << "device " << k.file.device << "\n"
    << "inode " << k.file.inode << "\n"
    << "size " << k.file.size << "\n"
    << "mtime_ns " << k.file.mtime_ns << "\n"
    << "ctime_ns " << k.file.ctime_ns << "\n"
    << "offset " << k.offset << "\n"
    << "length " << k.length << "\n"
    << "tensor "
    << base::hex_lower(reinterpret_cast<const uint8_t*>(k.tensor.data()), k.tensor.size()) << "\n"
    << "initializer " << k.initializer << "\n"
    << "data_type " << k.data_type << "\n"
    << "dims";
  for (int64_t d : k.dims) o << " " << d;
  o << "\n"
    << "algorithm " << digest::algorithm_name(k.algorithm) << "\n";
  return o.str();
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  return h;
}

bool parse_hex(std::string_view hex, uint8_t* out, size_t n) {
  if (hex.size() != 2 * n) return false;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < n; ++i) {
    const int hi = nib(hex[2 * i]), lo = nib(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return true;
}

// BLAKE3 of the record's text before its `check` line, in hex.
std::string record_check(std::string_view text) {
  const std::span<const uint8_t> part(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  const digest::Digest d = digest::hash_bytes(digest::Algorithm::kBlake3, {&part, 1}, nullptr);
  return base::hex_lower(d.data(), d.size());
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

MemoStore::MemoStore(std::string dir, int64_t granularity_ns)
    : dir_(std::move(dir)), granularity_ns_(granularity_ns) {}

std::string MemoStore::default_dir() {
  if (std::string d = env_or_empty("ONNX_PREPACK_MEMO_DIR"); !d.empty()) return d;
  if (std::string x = env_or_empty("XDG_CACHE_HOME"); !x.empty() && x[0] == '/') {
    return x + "/onnx-prepack/memo";
  }
  if (std::string h = env_or_empty("HOME"); !h.empty()) return h + "/.cache/onnx-prepack/memo";
  return "/tmp/onnx-prepack-memo-" + std::to_string(getuid());
}

int64_t MemoStore::granularity_ns(const MemoKey& key) const {
  if (granularity_ns_ >= 0) return granularity_ns_;
  const bool whole_seconds =
      key.file.mtime_ns % 1'000'000'000 == 0 && key.file.ctime_ns % 1'000'000'000 == 0;
  return whole_seconds ? kCoarseGranularityNs : kFineGranularityNs;
}

Result<MemoKey> MemoStore::key_for(const format::Model& model, int init_index,
                                   digest::Algorithm algorithm) const {
  const auto& inits = model.proto().graph().initializer();
  if (init_index < 0 || init_index >= inits.size()) {
    return out_of_range("initializers[" + std::to_string(init_index) + "]: out of range (" +
                        std::to_string(inits.size()) + " initializers)");
  }
  const onnx::TensorProto& t = inits.Get(init_index);
  const std::string ctx = format::tensor_context(init_index, t.name());
  MemoKey key;
  key.tensor = t.name();
  key.data_type = t.data_type();
  key.dims.assign(t.dims().begin(), t.dims().end());
  key.algorithm = algorithm;
  key.stat_time_ns = now_ns();
  if (format::storage_of(t) == format::Storage::kExternal) {
    OP_ASSIGN_OR_RETURN(format::ExternalSpan span, model.resolve_external(t.external_data(), ctx));
    OP_ASSIGN_OR_RETURN(base::FileIdentity now, base::stat_identity(span.file->path()));
    const base::FileIdentity& then = span.file->identity();
    if (now.device != then.device || now.inode != then.inode || now.size != then.size ||
        now.mtime_ns != then.mtime_ns || now.ctime_ns != then.ctime_ns) {
      return data_loss(ctx + ": external file '" + span.file->path() +
                       "' changed since it was mapped");
    }
    key.file = now;
    key.offset = span.offset;
    key.length = span.length;
    key.file_path = span.file->path();
    return key;
  }
  if (model.path().empty()) {
    return invalid_argument(ctx + ": model was not loaded from a file, no identity to memoise");
  }
  OP_ASSIGN_OR_RETURN(base::FileIdentity now, base::stat_identity(model.path()));
  const base::FileIdentity& then = model.identity();
  if (now.device != then.device || now.inode != then.inode || now.size != then.size ||
      now.mtime_ns != then.mtime_ns || now.ctime_ns != then.ctime_ns) {
    return data_loss(ctx + ": model file '" + model.path() + "' changed since it was loaded");
  }
  key.file = now;
  key.offset = 0;
  key.length = now.size;
  key.initializer = init_index;
  key.file_path = model.path();
  return key;
}

std::string MemoStore::record_path(const MemoKey& key) const {
  const std::string text = key_text(key);
  char name[40];
  std::snprintf(name, sizeof(name), "%016llx%016llx.memo",
                static_cast<unsigned long long>(fnv1a(text)),
                static_cast<unsigned long long>(fnv1a(text + "\x01")));
  return dir_ + "/" + name;
}

std::optional<digest::Digest> MemoStore::lookup(const MemoKey& key, std::string* why_not) const {
  auto fail = [&](std::string why) -> std::optional<digest::Digest> {
    if (why_not) *why_not = std::move(why);
    return std::nullopt;
  };
  const std::string path = record_path(key);
  Result<std::vector<uint8_t>> bytes = base::read_file(path, kMaxRecordBytes);
  if (!bytes.ok()) return fail("no record");
  const std::string text(bytes->begin(), bytes->end());
  const std::string expected = key_text(key);
  if (text.compare(0, expected.size(), expected) != 0) return fail("no record for this identity");
  std::istringstream rest(text.substr(expected.size()));
  std::string word, hex;
  long long stat_time = 0;
  if (!(rest >> word >> stat_time) || word != "stat_time_ns") return fail("record is corrupt");
  if (!(rest >> word >> hex) || word != "digest") return fail("record is corrupt");
  digest::Digest d{};
  if (!parse_hex(hex, d.data(), d.size())) return fail("record is corrupt");
  const size_t check_at = text.rfind("check ");
  if (check_at == std::string::npos ||
      text.compare(check_at, std::string::npos,
                   "check " + record_check(text.substr(0, check_at)) + "\n") != 0) {
    return fail("record is corrupt");
  }
  const int64_t changed = std::max(key.file.mtime_ns, key.file.ctime_ns);
  const int64_t gran = granularity_ns(key);
  if (int64_t(stat_time) - changed < gran) {
    return fail("record taken " + std::to_string(int64_t(stat_time) - changed) +
                " ns after the file's last change, within the " + std::to_string(gran) +
                " ns timestamp granularity");
  }
  return d;
}

Result<uint64_t> MemoStore::cleanup(uint64_t max_records) const {
  // Temporaries of writers that were killed, then the oldest records past the bound.
  uint64_t removed = uint64_t(base::remove_stale_temporaries(dir_ + "/"));
  std::vector<std::pair<int64_t, std::string>> records;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 5 || name.compare(name.size() - 5, 5, ".memo") != 0) continue;
    struct stat st;
    if (::lstat(e.path().c_str(), &st) != 0) continue;
    records.push_back({int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec, name});
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return io_error(dir_ + ": cannot list the memo folder: " + ec.message());
  }
  if (records.size() <= max_records) return removed;
  // Down to three quarters of the bound, so the next cleanups have nothing to do for a while.
  const size_t keep = size_t(max_records - max_records / 4);
  std::sort(records.begin(), records.end());
  for (size_t i = 0; i + keep < records.size(); ++i) {
    if (::unlink((dir_ + "/" + records[i].second).c_str()) == 0) ++removed;
  }
  return removed;
}

Status MemoStore::record(const MemoKey& key, const digest::Digest& d) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return io_error(dir_ + ": cannot create memo folder: " + ec.message());
  if (!cleaned_.exchange(true)) (void)cleanup(kMaxRecords);  // once per store object
  std::string text = key_text(key);
  text += "stat_time_ns " + std::to_string(key.stat_time_ns) + "\n";
  text += "digest " + base::hex_lower(d.data(), d.size()) + "\n";
  text += "check " + record_check(text) + "\n";
  // A lost record costs one hash; an fsync per record made the first load
  // after a copy slower than `full` (docs/deploy.md).
  return base::write_file_atomically(record_path(key),
                                     {reinterpret_cast<const uint8_t*>(text.data()), text.size()},
                                     base::Durability::kRebuildable);
}

Status memo_record(const MemoStore& store, const format::Model& model, int init_index,
                   digest::Algorithm algorithm, const digest::Digest& d) {
  OP_ASSIGN_OR_RETURN(MemoKey key, store.key_for(model, init_index, algorithm));
  return store.record(key, d);
}

}  // namespace onnx_prepack::resolve
