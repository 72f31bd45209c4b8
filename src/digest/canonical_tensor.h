// The canonical message of a tensor (format.md §5, docs/digest.md): a fixed header, then the
// content exactly as raw_data would hold it. Raw and external bytes are streamed in place;
// typed fields are converted in bounded pieces, never as a whole second copy.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/model.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::digest {

// "onnx-tensor-digest-v1" and its terminating NUL: 22 bytes.
inline constexpr std::string_view kCanonicalMagic{"onnx-tensor-digest-v1\0", 22};

// Receives the canonical message in order, in pieces of any size.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void update(std::span<const uint8_t> bytes) = 0;
};

// Collects the message (tests, docs vectors).
class VectorSink : public ByteSink {
 public:
  void update(std::span<const uint8_t> bytes) override {
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// Magic, u32le data_type, u32le rank, u64le dims.
std::vector<uint8_t> canonical_header(int32_t data_type, std::span<const int64_t> dims);

// Streams the header and canonical content of `t` into `sink` and returns the number of
// content bytes. Errors (prefixed with `context`) for an unknown data type, a negative dim,
// a segmented tensor, data in the wrong or several fields, a size that disagrees with the
// dims, or a typed value out of range for the element type.
Result<uint64_t> write_canonical_tensor(const format::Model& model, const onnx::TensorProto& t,
                                        std::string_view context, ByteSink& sink);

}  // namespace onnx_prepack::digest
