// A read-only memory mapping of a whole file, shared by every tensor that
// points into it. Zero-length files map to an empty span.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "onnx_prepack/status.h"

namespace onnx_prepack::base {

// What identifies a file's content for memoised digests (format.md §7.2).
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
};

class MappedFile {
 public:
  static Result<std::shared_ptr<MappedFile>> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  const FileIdentity& identity() const { return identity_; }

  // Hint the kernel to read the range ahead (MADV_WILLNEED); harmless if refused.
  void prefetch(size_t offset, size_t length) const;

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
  FileIdentity identity_;
};

Result<FileIdentity> stat_identity(const std::string& path);

// Maps the pages of [p, p + n) of a file mapping into the page tables in one
// call (MADV_POPULATE_READ, Linux 5.14+) instead of one fault per 16 pages as
// a reader touches them; pages not in the page cache are read. A reader about
// to hash the whole range (resolve's hashing ahead) calls it first. No effect
// where the kernel lacks it.
void populate_read(const void* p, size_t n);

}  // namespace onnx_prepack::base
