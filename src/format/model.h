// A parsed ONNX model with its external data files mapped on demand.
// Raw and external tensor bytes are exposed as read-only spans into the parsed
// message or the mapping: nothing is copied after the protobuf parse.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"

namespace onnx_prepack::format {

using ExternalDataEntries = google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>;

// Where a tensor's bytes live.
enum class Storage { kRaw, kTyped, kExternal, kEmpty };
std::string_view storage_name(Storage s);

// Resolved external-data reference: bytes inside a mapped file.
struct ExternalSpan {
  std::shared_ptr<base::MappedFile> file;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::string location;
  std::span<const uint8_t> bytes() const { return file->bytes().subspan(offset, length); }
};

// A tensor's storage: for kRaw and kExternal, `bytes` is the raw content.
struct TensorBytes {
  Storage storage = Storage::kEmpty;
  std::span<const uint8_t> bytes;
  std::shared_ptr<base::MappedFile> file;  // keeps an external mapping alive
  uint64_t file_offset = 0;                // for external data
  std::string location;                    // for external data
};

// A tensor held by a Constant node's `value` attribute.
struct ConstantTensor {
  int node_index = 0;
  std::string output;
  const onnx::TensorProto* tensor = nullptr;
};

Storage storage_of(const onnx::TensorProto& t);

class Model {
 public:
  // Reads and parses the file at `path`; external data is resolved relative to
  // its folder. A model over 2 GiB must use external data.
  static Result<std::unique_ptr<Model>> load(const std::string& path);
  // Parses bytes; `base_dir` is where external data locations are resolved.
  static Result<std::unique_ptr<Model>> parse(std::span<const uint8_t> bytes, std::string base_dir);
  static std::unique_ptr<Model> from_proto(onnx::ModelProto proto, std::string base_dir);

  onnx::ModelProto& proto() { return *proto_; }
  const onnx::ModelProto& proto() const { return *proto_; }
  const std::string& path() const { return path_; }
  const std::string& base_dir() const { return base_dir_; }
  uint64_t file_size() const { return file_size_; }
  // Identity of the model file when loaded from a path.
  const base::FileIdentity& identity() const { return identity_; }

  // Top-level initializer by name; nullptr when absent. Several initializers
  // with one name make count_initializers(name) > 1.
  const onnx::TensorProto* find_initializer(std::string_view name) const;
  int initializer_index(std::string_view name) const;  // -1 when absent
  int count_initializers(std::string_view name) const;

  // The bytes of a tensor as stored (raw or external). `context` names the
  // tensor in error messages ("initializers[3] 'fc1.weight'").
  Result<TensorBytes> tensor_bytes(const onnx::TensorProto& t, std::string_view context) const;

  // Resolves an external-data key list (TensorProto or StructProto).
  Result<ExternalSpan> resolve_external(const ExternalDataEntries& entries,
                                        std::string_view context) const;

  // Tensors of top-level Constant nodes' `value` attributes, in node order.
  std::vector<ConstantTensor> constant_tensors() const;

 private:
  Model() = default;
  void index_initializers();

  std::unique_ptr<onnx::ModelProto> proto_;
  std::string path_;
  std::string base_dir_;
  uint64_t file_size_ = 0;
  base::FileIdentity identity_;
  std::multimap<std::string, int, std::less<>> initializer_index_;
  mutable std::mutex files_mutex_;
  mutable std::map<std::string, std::shared_ptr<base::MappedFile>> files_;
};

// External data and payload files must lie inside the model's folder once
// symbolic links are resolved (decision, like ONNX Runtime's checks on
// external data paths): a link inside the folder that points outside it is
// refused unless allowed here (CLI: --allow-external-links) or with
// ONNX_PREPACK_ALLOW_EXTERNAL_LINKS=1. Process-wide.
void set_allow_external_links_outside(bool allow);
bool allow_external_links_outside();

// Validates an external location: relative, no "..", no empty component.
Status check_external_location(std::string_view location);

// Parses one external-data key list into location/offset/length (length -1 = to end).
struct ExternalRef {
  std::string location;
  uint64_t offset = 0;
  int64_t length = -1;
};
Result<ExternalRef> parse_external_entries(const ExternalDataEntries& entries);

std::string tensor_context(int index, std::string_view name);

}  // namespace onnx_prepack::format
