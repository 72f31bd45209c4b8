// Writes that never leave a partial file behind: a temporary file in the same
// folder, fsync, rename over the target, fsync of the folder.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "onnx_prepack/status.h"

namespace onnx_prepack::base {

// What a crash may do to a published file. kDurable: once commit() returns,
// the new bytes survive a power loss (fsync of the file and its folder).
// kRebuildable: readers never see a partial file while the system runs, but a
// power loss may leave the old file, no file, or (on some file systems) a
// torn one; only for records the reader can check and rebuild, such as memo
// records, which carry their own checksum. It saves two fsyncs per file.
enum class Durability { kDurable, kRebuildable };

// Accumulates pieces into a temporary file, then publishes it by rename.
class AtomicFileWriter {
 public:
  static Result<AtomicFileWriter> create(const std::string& final_path);
  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  ~AtomicFileWriter();  // removes the temporary file unless committed

  Status write(std::span<const uint8_t> bytes);
  Status write_zeros(uint64_t count);
  uint64_t offset() const { return offset_; }
  Status commit(Durability durability = Durability::kDurable);  // fsync + rename + fsync(dir)
  // commit() onto another name in the same folder (decided after writing).
  Status commit_as(const std::string& final_path);

 private:
  AtomicFileWriter() = default;
  int fd_ = -1;
  uint64_t offset_ = 0;
  std::string final_path_;
  std::string temp_path_;
  bool committed_ = false;
};

// Removes temporary files that AtomicFileWriter left beside `final_path` (or
// beside any file whose name starts with its name, such as its data files)
// when its process was killed: "<name>*.tmp.<pid>.<hex>" whose pid no longer
// runs. Best effort; returns how many were removed.
int remove_stale_temporaries(const std::string& final_path);

Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes,
                             Durability durability = Durability::kDurable);
Result<std::vector<uint8_t>> read_file(const std::string& path, uint64_t max_bytes);

}  // namespace onnx_prepack::base
