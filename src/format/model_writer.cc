#include "format/model_writer.h"

#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "base/atomic_file.h"
#include "base/content_hash.h"

namespace onnx_prepack::format {
namespace {

namespace fs = std::filesystem;

std::string file_name_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dir_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

void set_external(google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>* entries,
                  const std::string& location, uint64_t offset, uint64_t length) {
  entries->Clear();
  auto add = [&](const char* k, const std::string& v) {
    auto* e = entries->Add();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
}

bool same_dir(const std::string& a, const std::string& b) {
  std::error_code ec1, ec2;
  auto ca = fs::weakly_canonical(a, ec1);
  auto cb = fs::weakly_canonical(b, ec2);
  return !ec1 && !ec2 && ca == cb;
}

Status pad_to(base::AtomicFileWriter& w, uint64_t alignment) {
  uint64_t rem = alignment ? w.offset() % alignment : 0;
  return rem ? w.write_zeros(alignment - rem) : ok_status();
}

Status serialize_to(const onnx::ModelProto& proto, const std::string& path) {
  size_t size = proto.ByteSizeLong();
  if (size > size_t(INT_MAX)) {
    return resource_exhausted("'" + path + "': model would be " + std::to_string(size) +
                              " bytes, over protobuf's 2 GiB limit");
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    return internal_error("'" + path + "': serialisation failed");
  return base::write_file_atomically(
      path, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

// "<model>.<16 hex>.data", the hex from the data file's bytes and layout: one
// input gives one output (reproducible builds), and another content another
// name, so the model being replaced keeps its own file until the new model is
// in place. Equal names mean equal bytes: replacing one by the other is safe.
std::string content_data_name(const std::string& model_name, const base::ContentHash& h) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.value()));
  return model_name + "." + hex + ".data";
}

// A data file name this writer gives for `model_name`: "<model>.data" or
// "<model>.<16 hex>.data". Only these are ever removed.
bool is_our_data_name(const std::string& model_name, const std::string& name) {
  if (name == model_name + ".data") return true;
  const std::string prefix = model_name + ".";
  if (name.size() != prefix.size() + 16 + 5 || name.rfind(prefix, 0) != 0) return false;
  if (name.compare(name.size() - 5, 5, ".data") != 0) return false;
  for (size_t i = prefix.size(); i < prefix.size() + 16; ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return false;
  }
  return true;
}

void for_each_location(const onnx::ModelProto& proto,
                       const std::function<void(const std::string&)>& f) {
  auto visit = [&](const google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>& kv) {
    for (const auto& e : kv) {
      if (e.key() == "location") f(e.value());
    }
  };
  for (const auto& t : proto.graph().initializer()) visit(t.external_data());
  for (const auto& ct : proto.compiled_tensors()) visit(ct.value().external_data());
}

std::set<std::string> locations_of(const onnx::ModelProto& proto) {
  std::set<std::string> out;
  for_each_location(proto, [&](const std::string& l) { out.insert(l); });
  return out;
}

void rename_location(onnx::ModelProto& proto, const std::string& from, const std::string& to) {
  auto visit = [&](google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>* kv) {
    for (auto& e : *kv) {
      if (e.key() == "location" && e.value() == from) e.set_value(to);
    }
  };
  for (auto& t : *proto.mutable_graph()->mutable_initializer()) visit(t.mutable_external_data());
  for (auto& ct : *proto.mutable_compiled_tensors()) {
    visit(ct.mutable_value()->mutable_external_data());
  }
}

// Data files of the model now at `path` that carry our names for it.
std::set<std::string> our_data_files_of(const std::string& path) {
  std::set<std::string> out;
  Result<std::unique_ptr<Model>> old = Model::load(path);
  if (!old.ok()) return out;
  const std::string name = file_name_of(path);
  for (const std::string& l : locations_of((*old)->proto())) {
    if (is_our_data_name(name, l)) out.insert(l);
  }
  return out;
}

}  // namespace

Status write_model_inline(const onnx::ModelProto& proto, const std::string& path) {
  return serialize_to(proto, path);
}

Result<WriteReport> write_model(onnx::ModelProto& proto, const std::string& path,
                                const WriteOptions& options, const Model* source) {
  WriteReport report;
  const std::string out_dir = dir_of(path);
  std::string location =
      options.data_file.empty() ? file_name_of(path) + ".data" : options.data_file;
  OP_RETURN_IF_ERROR(check_external_location(location));
  const bool same_folder = source != nullptr && same_dir(source->base_dir(), out_dir);
  if (options.fresh_data_file) base::remove_stale_temporaries(path);

  std::optional<base::AtomicFileWriter> writer;
  base::ContentHash content_hash;  // of every (offset, bytes) appended
  auto open_writer = [&]() -> Status {
    if (writer) return ok_status();
    OP_ASSIGN_OR_RETURN(auto w, base::AtomicFileWriter::create(out_dir + "/" + location));
    writer.emplace(std::move(w));
    return ok_status();
  };
  auto append = [&](std::span<const uint8_t> bytes) -> Result<uint64_t> {
    OP_RETURN_IF_ERROR(open_writer());
    OP_RETURN_IF_ERROR(pad_to(*writer, options.alignment));
    uint64_t offset = writer->offset();
    OP_RETURN_IF_ERROR(writer->write(bytes));
    const uint8_t where[8] = {uint8_t(offset),       uint8_t(offset >> 8),  uint8_t(offset >> 16),
                              uint8_t(offset >> 24), uint8_t(offset >> 32), uint8_t(offset >> 40),
                              uint8_t(offset >> 48), uint8_t(offset >> 56)};
    content_hash.update(where);
    content_hash.update(bytes);
    return offset;
  };

  std::vector<uint8_t> lazy_buffer;  // reused: one produced payload in memory at a time
  std::vector<int> dropped;          // unreadable existing payloads (drop_unreadable_payloads)
  for (int i = 0; i < proto.compiled_tensors_size(); ++i) {
    auto* value = proto.mutable_compiled_tensors(i)->mutable_value();
    const std::string ctx = "compiled_tensors[" + std::to_string(i) + "].value";
    if (auto lazy = options.lazy_payloads.find(i); lazy != options.lazy_payloads.end()) {
      if (value->external_data_size() > 0 || !value->raw_data().empty()) {
        return invalid_argument(ctx + ": a produced payload must not also hold data");
      }
      lazy_buffer.assign(size_t(lazy->second.size), 0);
      Status filled = lazy->second.fill(lazy_buffer);
      if (!filled.ok()) return filled.with_context(ctx);
      if (options.on_payload && !options.on_payload(i, lazy_buffer)) {
        return internal_error(ctx + ": a produced payload was refused");
      }
      OP_ASSIGN_OR_RETURN(uint64_t off, append(lazy_buffer));
      set_external(value->mutable_external_data(), location, off, lazy_buffer.size());
      ++report.payloads_external;
      continue;
    }
    if (value->external_data_size() > 0) {
      if (source == nullptr) {
        return invalid_argument(ctx + ": payload is external but no source model was given");
      }
      Result<ExternalSpan> span = source->resolve_external(value->external_data(), ctx);
      if (!span.ok() && options.drop_unreadable_payloads) {
        dropped.push_back(i);  // an entry to replace, not a reason to fail
        continue;
      }
      if (!span.ok()) return span.status();
      if (options.on_payload && !options.on_payload(i, span->bytes())) {
        dropped.push_back(i);
        continue;
      }
      OP_ASSIGN_OR_RETURN(uint64_t off, append(span->bytes()));
      set_external(value->mutable_external_data(), location, off, span->length);
      ++report.payloads_external;
    } else if (value->raw_data().size() >= options.payload_threshold &&
               !value->raw_data().empty()) {
      const std::string& raw = value->raw_data();
      const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(raw.data()),
                                           raw.size());
      if (options.on_payload && !options.on_payload(i, bytes)) {
        dropped.push_back(i);
        continue;
      }
      OP_ASSIGN_OR_RETURN(uint64_t off, append(bytes));
      set_external(value->mutable_external_data(), location, off, raw.size());
      value->clear_raw_data();
      ++report.payloads_external;
    }
  }

  if (options.on_phase) options.on_phase("writing tensors");
  auto* graph = proto.mutable_graph();
  for (int i = 0; i < graph->initializer_size(); ++i) {
    auto* t = graph->mutable_initializer(i);
    const std::string ctx = tensor_context(i, t->name());
    Storage st = storage_of(*t);
    if (st == Storage::kExternal) {
      if (source == nullptr) {
        return invalid_argument(ctx + ": tensor is external but no source model was given");
      }
      OP_ASSIGN_OR_RETURN(ExternalSpan span, source->resolve_external(t->external_data(), ctx));
      if (options.reference_existing_external && same_folder && span.location != location) {
        ++report.tensors_referenced;
        continue;  // location is still valid from the output folder
      }
      OP_ASSIGN_OR_RETURN(uint64_t off, append(span.bytes()));
      set_external(t->mutable_external_data(), location, off, span.length);
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      ++report.tensors_external;
    } else if (st == Storage::kRaw && t->raw_data().size() >= options.external_threshold) {
      const std::string& raw = t->raw_data();
      OP_ASSIGN_OR_RETURN(uint64_t off,
                          append({reinterpret_cast<const uint8_t*>(raw.data()), raw.size()}));
      set_external(t->mutable_external_data(), location, off, raw.size());
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      t->clear_raw_data();
      ++report.tensors_external;
    }
  }

  for (auto it = dropped.rbegin(); it != dropped.rend(); ++it) {
    proto.mutable_compiled_tensors()->DeleteSubrange(*it, 1);
    ++report.payloads_dropped;
  }

  if (writer) {
    if (options.on_phase) options.on_phase("syncing");
    report.data_bytes = writer->offset();
    if (options.fresh_data_file) {
      // The name is decided now, after the bytes: every reference is rewritten.
      const std::string fresh = content_data_name(file_name_of(path), content_hash);
      rename_location(proto, location, fresh);
      location = fresh;
      OP_RETURN_IF_ERROR(writer->commit_as(out_dir + "/" + location));
    } else {
      OP_RETURN_IF_ERROR(writer->commit());
    }
    report.data_file = location;
  }
  // What the model being replaced referenced, read before it is replaced.
  std::set<std::string> previous;
  if (options.fresh_data_file) previous = our_data_files_of(path);
  if (options.on_phase) options.on_phase("writing model");
  Status written = serialize_to(proto, path);
  if (!written.ok()) {
    // The new data file is referenced by nothing: do not leave it behind.
    if (options.fresh_data_file && writer) ::unlink((out_dir + "/" + location).c_str());
    return written;
  }
  if (options.fresh_data_file) {
    const std::set<std::string> now = locations_of(proto);
    for (const std::string& old : previous) {
      if (now.count(old) != 0) continue;
      if (::unlink((out_dir + "/" + old).c_str()) == 0) report.removed_data_files.push_back(old);
    }
  }
  return report;
}

}  // namespace onnx_prepack::format
