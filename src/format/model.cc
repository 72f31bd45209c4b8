#include "format/model.h"

#include <google/protobuf/io/coded_stream.h>
#include <stdlib.h>

#include <atomic>
#include <charconv>
#include <climits>
#include <cstdlib>

#include "format/wire_scan.h"

namespace onnx_prepack::format {

std::string_view storage_name(Storage s) {
  switch (s) {
    case Storage::kRaw:
      return "raw";
    case Storage::kTyped:
      return "typed";
    case Storage::kExternal:
      return "external";
    case Storage::kEmpty:
      return "empty";
  }
  return "?";
}

Storage storage_of(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0) {
    return Storage::kExternal;
  }
  if (t.has_raw_data()) return Storage::kRaw;
  if (t.float_data_size() || t.int32_data_size() || t.int64_data_size() || t.double_data_size() ||
      t.uint64_data_size() || t.string_data_size()) {
    return Storage::kTyped;
  }
  return Storage::kEmpty;
}

std::string tensor_context(int index, std::string_view name) {
  return "initializers[" + std::to_string(index) + "] '" + std::string(name) + "'";
}

namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Result<uint64_t> parse_u64(std::string_view key, std::string_view text) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) {
    return invalid_argument("external data '" + std::string(key) +
                            "' is not a non-negative integer: '" + std::string(text) + "'");
  }
  return v;
}

}  // namespace

namespace {
std::atomic<int> g_allow_links{-1};  // -1: not set, read the environment

// `path` resolves (symbolic links followed) to a file below `dir`.
Status check_inside(const std::string& dir, const std::string& path, std::string_view location) {
  char* d = ::realpath(dir.c_str(), nullptr);
  char* p = ::realpath(path.c_str(), nullptr);
  std::string real_dir = d ? d : "", real_path = p ? p : "";
  std::free(d);
  std::free(p);
  if (real_dir.empty() || real_path.empty()) return ok_status();  // the open reports it
  if (real_dir != "/") real_dir += "/";
  if (real_path.rfind(real_dir, 0) == 0) return ok_status();
  return invalid_argument("external data '" + std::string(location) + "' resolves to '" +
                          real_path +
                          "', outside the model's folder (a symbolic link); refused unless "
                          "--allow-external-links or ONNX_PREPACK_ALLOW_EXTERNAL_LINKS=1");
}
}  // namespace

void set_allow_external_links_outside(bool allow) { g_allow_links = allow ? 1 : 0; }

bool allow_external_links_outside() {
  int v = g_allow_links.load();
  if (v < 0) {
    const char* e = std::getenv("ONNX_PREPACK_ALLOW_EXTERNAL_LINKS");
    v = e != nullptr && std::string_view(e) == "1" ? 1 : 0;
    g_allow_links = v;
  }
  return v == 1;
}

Status check_external_location(std::string_view loc) {
  if (loc.empty()) return invalid_argument("external data has no location");
  if (loc.front() == '/') {
    return invalid_argument("external data location '" + std::string(loc) + "' is absolute");
  }
  if (loc.find('\0') != std::string_view::npos) {
    return invalid_argument("external data location contains a NUL byte");
  }
  size_t start = 0;
  while (start <= loc.size()) {
    size_t end = loc.find_first_of("/\\", start);
    if (end == std::string_view::npos) end = loc.size();
    std::string_view part = loc.substr(start, end - start);
    if (part == "..") {
      return invalid_argument("external data location '" + std::string(loc) +
                              "' escapes the model's folder with '..'");
    }
    if (end == loc.size() && (part.empty() || part == ".")) {
      return invalid_argument("external data location '" + std::string(loc) +
                              "' names a folder, not a file");
    }
    start = end + 1;
  }
  return ok_status();
}

Result<ExternalRef> parse_external_entries(const ExternalDataEntries& entries) {
  ExternalRef ref;
  bool has_location = false;
  for (const auto& e : entries) {
    if (e.key() == "location") {
      ref.location = e.value();
      has_location = true;
    } else if (e.key() == "offset") {
      OP_ASSIGN_OR_RETURN(ref.offset, parse_u64("offset", e.value()));
    } else if (e.key() == "length") {
      OP_ASSIGN_OR_RETURN(uint64_t len, parse_u64("length", e.value()));
      if (len > uint64_t(INT64_MAX)) return invalid_argument("external data length is too large");
      ref.length = int64_t(len);
    }
  }
  if (!has_location) return invalid_argument("external data has no 'location' key");
  OP_RETURN_IF_ERROR(check_external_location(ref.location));
  return ref;
}

Result<std::unique_ptr<Model>> Model::load(const std::string& path) {
  OP_ASSIGN_OR_RETURN(auto file, base::MappedFile::open(path));
  if (file->bytes().empty()) {
    return invalid_argument("'" + path + "' is empty (0 bytes): not an ONNX model");
  }
  OP_ASSIGN_OR_RETURN(auto model, parse(file->bytes(), dir_of(path)));
  model->path_ = path;
  model->identity_ = file->identity();
  return model;
}

Result<std::unique_ptr<Model>> Model::parse(std::span<const uint8_t> bytes, std::string base_dir) {
  if (bytes.size() > size_t(INT_MAX)) {
    return resource_exhausted("model is " + std::to_string(bytes.size()) +
                              " bytes; a protobuf message is limited to 2 GiB, store large "
                              "tensors as external data");
  }
  OP_RETURN_IF_ERROR(check_wire_limits(bytes));
  auto proto = std::make_unique<onnx::ModelProto>();
  google::protobuf::io::CodedInputStream in(bytes.data(), int(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  in.SetRecursionLimit(kParseRecursionLimit);
  if (!proto->ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    std::string where = describe_parse_failure(bytes);
    return data_loss("not a valid ONNX model: protobuf parse failed (" +
                     std::to_string(bytes.size()) + " bytes" +
                     (where.empty() ? "; truncated or not a ModelProto" : "; " + where) + ")");
  }
  std::unique_ptr<Model> model(new Model());
  model->proto_ = std::move(proto);
  model->base_dir_ = std::move(base_dir);
  model->file_size_ = bytes.size();
  model->index_initializers();
  return model;
}

std::unique_ptr<Model> Model::from_proto(onnx::ModelProto proto, std::string base_dir) {
  std::unique_ptr<Model> model(new Model());
  model->proto_ = std::make_unique<onnx::ModelProto>(std::move(proto));
  model->base_dir_ = std::move(base_dir);
  model->index_initializers();
  return model;
}

void Model::index_initializers() {
  initializer_index_.clear();
  const auto& inits = proto_->graph().initializer();
  for (int i = 0; i < inits.size(); ++i) initializer_index_.emplace(inits[i].name(), i);
}

const onnx::TensorProto* Model::find_initializer(std::string_view name) const {
  int i = initializer_index(name);
  return i < 0 ? nullptr : &proto_->graph().initializer(i);
}

int Model::initializer_index(std::string_view name) const {
  auto it = initializer_index_.find(name);
  return it == initializer_index_.end() ? -1 : it->second;
}

int Model::count_initializers(std::string_view name) const {
  auto range = initializer_index_.equal_range(name);
  return int(std::distance(range.first, range.second));
}

Result<ExternalSpan> Model::resolve_external(const ExternalDataEntries& entries,
                                             std::string_view context) const {
  auto ref = parse_external_entries(entries);
  if (!ref.ok()) return ref.status().with_context(context);
  std::shared_ptr<base::MappedFile> file;
  {
    std::lock_guard<std::mutex> lock(files_mutex_);
    auto it = files_.find(ref->location);
    if (it != files_.end()) {
      file = it->second;
    } else {
      const std::string full = base_dir_ + "/" + ref->location;
      if (!allow_external_links_outside()) {
        Status inside = check_inside(base_dir_, full, ref->location);
        if (!inside.ok()) return inside.with_context(context);
      }
      auto opened = base::MappedFile::open(full);
      if (!opened.ok()) {
        return opened.status().with_context(std::string(context) + ": external data '" +
                                            ref->location + "'");
      }
      file = *opened;
      files_.emplace(ref->location, file);
    }
  }
  uint64_t size = file->bytes().size();
  if (ref->offset > size) {
    return out_of_range(std::string(context) + ": external data offset " +
                        std::to_string(ref->offset) + " is past the end of '" + ref->location +
                        "' (" + std::to_string(size) + " bytes)");
  }
  uint64_t length = ref->length < 0 ? size - ref->offset : uint64_t(ref->length);
  if (length > size - ref->offset) {
    return out_of_range(std::string(context) + ": external data offset " +
                        std::to_string(ref->offset) + " + length " + std::to_string(length) +
                        " is past the end of '" + ref->location + "' (" + std::to_string(size) +
                        " bytes)");
  }
  ExternalSpan span;
  span.file = std::move(file);
  span.offset = ref->offset;
  span.length = length;
  span.location = ref->location;
  return span;
}

Result<TensorBytes> Model::tensor_bytes(const onnx::TensorProto& t,
                                        std::string_view context) const {
  TensorBytes out;
  out.storage = storage_of(t);
  if (out.storage == Storage::kExternal) {
    OP_ASSIGN_OR_RETURN(ExternalSpan span, resolve_external(t.external_data(), context));
    out.bytes = span.bytes();
    out.file = span.file;
    out.file_offset = span.offset;
    out.location = span.location;
  } else if (out.storage == Storage::kRaw) {
    const std::string& raw = t.raw_data();
    out.bytes = {reinterpret_cast<const uint8_t*>(raw.data()), raw.size()};
  }
  return out;
}

std::vector<ConstantTensor> Model::constant_tensors() const {
  std::vector<ConstantTensor> out;
  const auto& nodes = proto_->graph().node();
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    if (n.op_type() != "Constant" || !(n.domain().empty() || n.domain() == "ai.onnx")) continue;
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) {
        out.push_back({i, n.output_size() > 0 ? n.output(0) : std::string(), &a.t()});
      }
    }
  }
  return out;
}

}  // namespace onnx_prepack::format
