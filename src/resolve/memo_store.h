// Memoised source digests (format.md §7.2 `memo`): a digest recorded by this tool is
// trusted for the same file identity (device, inode, size, mtime_ns, ctime_ns)
// and byte range, unless the record was taken less than the timestamp
// granularity after the file's last change. Resolve layer.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "digest/digest.h"
#include "format/model.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::resolve {

// What a memo record is keyed by. For an external tensor: its data file and
// byte range; for an inline tensor: the model file as a whole plus the
// initializer's index and name. The tensor header (type, dims) is part of the
// key because the digest covers it and it lives in the model file.
struct MemoKey {
  base::FileIdentity file;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string tensor;        // initializer name
  int32_t initializer = -1;  // index, for inline tensors; -1 for external ones
  int32_t data_type = 0;
  std::vector<int64_t> dims;
  digest::Algorithm algorithm = digest::Algorithm::kBlake3;
  int64_t stat_time_ns = 0;  // wall clock when `file` was stat'ed (not part of identity)
  std::string file_path;     // for messages only
};

class MemoStore {
 public:
  // `dir` is created on first record. granularity_ns < 0: 20 ms on file systems
  // with sub-second timestamps, 2 s when the file's times are whole seconds.
  explicit MemoStore(std::string dir, int64_t granularity_ns = -1);

  // $ONNX_PREPACK_MEMO_DIR, else $XDG_CACHE_HOME/onnx-prepack/memo, else
  // $HOME/.cache/onnx-prepack/memo.
  static std::string default_dir();
  const std::string& dir() const { return dir_; }

  // Key of initializer `init_index` of `model` as the file is now. Errors when
  // the model was not loaded from a file or the file changed since it was
  // mapped or loaded (then nothing can be trusted or recorded).
  Result<MemoKey> key_for(const format::Model& model, int init_index,
                          digest::Algorithm algorithm) const;

  // A trusted digest, or nullopt with `why_not` ("no record", "record within
  // 20000000 ns of the file's ctime", ...).
  std::optional<digest::Digest> lookup(const MemoKey& key, std::string* why_not) const;

  // Writes the record atomically; concurrent writers of one key are harmless.
  Status record(const MemoKey& key, const digest::Digest& digest) const;

  int64_t granularity_ns(const MemoKey& key) const;

  // Size bound (decision): at most kMaxRecords records (about 300 bytes each).
  // The first record() of a MemoStore object calls cleanup(kMaxRecords).
  static constexpr uint64_t kMaxRecords = 65536;
  // Removes temporaries of killed writers and, past `max_records`, the oldest
  // records (by mtime) down to three quarters of it. Returns how many files
  // were removed.
  Result<uint64_t> cleanup(uint64_t max_records) const;

 private:
  std::string record_path(const MemoKey& key) const;
  std::string dir_;
  int64_t granularity_ns_;
  mutable std::atomic<bool> cleaned_{false};
};

// For `compile`: records that initializer `init_index` of `model` (as the file
// is now, typically just written) has `digest` under `algorithm`. Call it
// after the file is complete; the identity is stat'ed here.
Status memo_record(const MemoStore& store, const format::Model& model, int init_index,
                   digest::Algorithm algorithm, const digest::Digest& digest);

}  // namespace onnx_prepack::resolve
