// Writes that never leave a partial file behind: a temporary file in the same
// folder, fsync, rename over the target, fsync of the folder.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "onnx_prepack/status.h"

namespace onnx_prepack::base {

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
  Status commit();  // fsync + rename + fsync(dir)

 private:
  AtomicFileWriter() = default;
  int fd_ = -1;
  uint64_t offset_ = 0;
  std::string final_path_;
  std::string temp_path_;
  bool committed_ = false;
};

Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes);
Result<std::vector<uint8_t>> read_file(const std::string& path, uint64_t max_bytes);

}  // namespace onnx_prepack::base
