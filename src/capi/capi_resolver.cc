// C API: the resolver for a runtime with its own kernels, write-back, and this
// library's own formats (include/onnx_prepack/c_api.h).
#include <cstring>
#include <string>

#include "capi/capi_internal.h"
#include "device/cpu_features.h"
#include "device/device_match.h"
#include "engine/engine_options.h"
#include "pack/format_list.h"
#include "pack/pack_family.h"

using namespace onnx_prepack;  // NOLINT: a .cc file implementing the C API
using capi::guard;

namespace {

Result<resolve::VerifyPolicy> to_policy(int32_t p, std::string_view function) {
  switch (p) {
    case OP_VERIFY_FULL:
      return resolve::VerifyPolicy::kFull;
    case OP_VERIFY_MEMO:
      return resolve::VerifyPolicy::kMemo;
    case OP_VERIFY_OFF:
      return resolve::VerifyPolicy::kOff;
  }
  return invalid_argument(std::string(function) + ": verify policy " + std::to_string(int(p)) +
                          " is not OP_VERIFY_FULL, OP_VERIFY_MEMO or OP_VERIFY_OFF");
}

Result<resolve::CacheMode> to_cache_mode(int32_t m, std::string_view function) {
  switch (m) {
    case OP_CACHE_OFF:
      return resolve::CacheMode::kOff;
    case OP_CACHE_READ_ONLY:
      return resolve::CacheMode::kReadOnly;
    case OP_CACHE_READ_WRITE:
      return resolve::CacheMode::kReadWrite;
  }
  return invalid_argument(std::string(function) + ": cache mode " + std::to_string(int(m)) +
                          " is not OP_CACHE_OFF, OP_CACHE_READ_ONLY or OP_CACHE_READ_WRITE");
}

using capi::BuiltinFormat;
Status family_check(const BuiltinFormat& b, int32_t source_type,
                    std::span<const int64_t> source_dims, const onnx::StructTypeProto& type,
                    std::span<const uint64_t> entry_dims);
int builtin_check_dims(void* user_data, int32_t source_type, const int64_t* source_dims,
                       size_t source_rank, const uint64_t* entry_dims, size_t n_entry_dims,
                       char* message, size_t message_size);

// The caller's format as the resolver sees it; its C dims check wrapped.
resolve::AcceptableFormat to_format(const op_acceptable_format& f) {
  resolve::AcceptableFormat a;
  a.name = f.name;
  a.format_version = f.format_version;
  a.required_architecture = f.required_architecture != nullptr ? f.required_architecture : "";
  if (f.check_dims == &builtin_check_dims && f.user_data != nullptr) {
    const auto* b = static_cast<const BuiltinFormat*>(f.user_data);
    a.check_dims = [b](const onnx::TensorProto& source, const onnx::StructTypeProto& type,
                       std::span<const uint64_t> dims) -> Status {
      std::vector<int64_t> sdims(source.dims().begin(), source.dims().end());
      return family_check(*b, source.data_type(), sdims, type, dims);
    };
  } else if (f.check_dims != nullptr) {
    op_check_dims_fn fn = f.check_dims;
    void* user = f.user_data;
    std::string name = a.name;
    a.check_dims = [fn, user, name](const onnx::TensorProto& source, const onnx::StructTypeProto&,
                                    std::span<const uint64_t> dims) -> Status {
      char message[256] = {0};
      std::vector<int64_t> sdims(source.dims().begin(), source.dims().end());
      int rc = fn(user, source.data_type(), sdims.data(), sdims.size(), dims.data(), dims.size(),
                  message, sizeof(message));
      if (rc == 0) return ok_status();
      message[sizeof(message) - 1] = '\0';
      return invalid_argument(message[0] != '\0'
                                  ? std::string(message)
                                  : "format '" + name + "' rejects dims of this entry (code " +
                                        std::to_string(rc) + ")");
    };
  }
  return a;
}

Status check_formats(const op_acceptable_format* formats, size_t n, std::string_view function) {
  if (n > 0 && formats == nullptr) {
    return invalid_argument(std::string(function) + ": formats is null with n_formats " +
                            std::to_string(n));
  }
  for (size_t i = 0; i < n; ++i) {
    if (formats[i].name == nullptr || formats[i].format_version == nullptr) {
      return invalid_argument(std::string(function) + ": formats[" + std::to_string(i) +
                              "]: name and format_version must not be null");
    }
  }
  return ok_status();
}

Status family_check(const BuiltinFormat& b, int32_t source_type,
                    std::span<const int64_t> source_dims, const onnx::StructTypeProto& type,
                    std::span<const uint64_t> entry_dims) {
  pack::WeightUse use = b.use;
  use.data_type = source_type;
  use.dims.assign(source_dims.begin(), source_dims.end());
  return b.family->check_entry(use, b.format, type, entry_dims);
}

// The dims check of this library's formats when a caller runs it itself; the
// resolver runs the family's check with the entry's own type (to_format).
int builtin_check_dims(void* user_data, int32_t source_type, const int64_t* source_dims,
                       size_t source_rank, const uint64_t* entry_dims, size_t n_entry_dims,
                       char* message, size_t message_size) {
  try {
    const auto* b = static_cast<const BuiltinFormat*>(user_data);
    if (b == nullptr || b->family == nullptr) return 1;
    Status s = family_check(*b, source_type, std::span<const int64_t>(source_dims, source_rank),
                            b->type, std::span<const uint64_t>(entry_dims, n_entry_dims));
    if (s.ok()) return 0;
    if (message != nullptr && message_size > 0) {
      size_t n = std::min(message_size - 1, s.message().size());
      std::memcpy(message, s.message().data(), n);
      message[n] = '\0';
    }
    return 1;
  } catch (...) {
    return 1;
  }
}

op_acceptable_format to_c(const BuiltinFormat& b) {
  return op_acceptable_format{b.name.c_str(), b.version.c_str(), b.architecture.c_str(),
                              &builtin_check_dims, const_cast<void*>(static_cast<const void*>(&b))};
}

}  // namespace

namespace onnx_prepack::capi {

// Opens the store named by dir/mode (null when dir is null or the mode off).
Result<std::unique_ptr<resolve::CacheStore>> open_cache(const char* dir, int32_t mode,
                                                        uint64_t max_bytes,
                                                        std::string_view function) {
  OP_ASSIGN_OR_RETURN(resolve::CacheMode m, to_cache_mode(mode, function));
  if (dir == nullptr || m == resolve::CacheMode::kOff) {
    return std::unique_ptr<resolve::CacheStore>();
  }
  if (dir[0] == '\0') return invalid_argument(std::string(function) + ": cache_dir is empty");
  return resolve::CacheStore::open(dir, m, max_bytes);
}

Result<resolve::VerifyPolicy> verify_policy(int32_t p, std::string_view function) {
  return to_policy(p, function);
}

Result<resolve::CacheMode> cache_mode(int32_t m, std::string_view function) {
  return to_cache_mode(m, function);
}

}  // namespace onnx_prepack::capi

extern "C" {

op_resolver_options op_resolver_options_default(void) {
  op_resolver_options o;
  std::memset(&o, 0, sizeof(o));
  o.verify = OP_VERIFY_FULL;
  o.cache_mode = OP_CACHE_READ_WRITE;
  o.cache_max_bytes = kDefaultCacheMaxBytes;
  return o;
}

op_status_code op_resolver_create(op_model* model, const op_resolver_options* options,
                                  op_resolver** out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_resolver_create";
    OP_CAPI_REQUIRE(out, kFn);
    *out = nullptr;
    OP_CAPI_REQUIRE(model, kFn);
    const op_resolver_options o = options != nullptr ? *options : op_resolver_options_default();
    OP_RETURN_IF_ERROR(capi::check_threads(kFn, o.n_threads));
    if (o.n_fed_inputs > 0 && o.fed_inputs == nullptr) {
      return invalid_argument(std::string(kFn) + ": fed_inputs is null with n_fed_inputs " +
                              std::to_string(o.n_fed_inputs));
    }
    auto handle = std::make_unique<op_resolver>();
    handle->model = model->model;
    resolve::ResolverOptions ro;
    OP_ASSIGN_OR_RETURN(ro.verify, to_policy(o.verify, kFn));
    if (o.memo_dir != nullptr) ro.memo_dir = o.memo_dir;
    OP_ASSIGN_OR_RETURN(handle->store,
                        capi::open_cache(o.cache_dir, o.cache_mode, o.cache_max_bytes, kFn));
    ro.cache = handle->store.get();
    if (o.runtime_name != nullptr) ro.runtime_name = o.runtime_name;
    if (o.runtime_version != nullptr) ro.runtime_version = o.runtime_version;
    for (size_t i = 0; i < o.n_fed_inputs; ++i) {
      if (o.fed_inputs[i] == nullptr) {
        return invalid_argument(std::string(kFn) + ": fed_inputs[" + std::to_string(i) +
                                "] is null");
      }
      ro.fed_inputs.insert(o.fed_inputs[i]);
    }
    ro.pool = engine::pool_for(o.n_threads, handle->pool);
    device::HostDescription host;
    if (o.architecture != nullptr) {
      auto pretended = device::HostDescription::pretend(o.architecture);
      if (!pretended.ok())
        return pretended.status().with_context(std::string(kFn) + ": architecture");
      host = std::move(*pretended);
    } else {
      host = device::HostDescription::detect();
    }
    handle->resolver = std::make_unique<resolve::Resolver>(*handle->model, std::move(host), ro);
    *out = handle.release();
    return ok_status();
  });
}

void op_resolver_free(op_resolver* resolver) { delete resolver; }

op_status_code op_resolve(op_resolver* resolver, const char* source_name,
                          const op_acceptable_format* formats, size_t n_formats,
                          op_resolution* out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_resolve";
    OP_CAPI_REQUIRE(resolver, kFn);
    OP_CAPI_REQUIRE(source_name, kFn);
    OP_CAPI_REQUIRE(out, kFn);
    OP_RETURN_IF_ERROR(check_formats(formats, n_formats, kFn));
    resolve::PackRequest request;
    request.source_name = source_name;
    for (size_t i = 0; i < n_formats; ++i) {
      request.formats.push_back(to_format(formats[i]));
      // Our own formats carry their use: a pack that reads other initializers
      // too is checked against them (format.md §4.5), as in our runtime.
      if (!request.lineage && formats[i].check_dims == &builtin_check_dims &&
          formats[i].user_data != nullptr) {
        const auto* b = static_cast<const BuiltinFormat*>(formats[i].user_data);
        if (b->use.node != nullptr) request.lineage = b->family->lineage(b->use);
      }
    }

    OpResolutionRecord rec;
    rec.resolution = resolver->resolver->resolve(request);
    const resolve::Resolution& r = rec.resolution;
    if (r.is_hit()) {
      rec.detail = r.hit->entry >= 0 ? "compiled_tensors[" + std::to_string(r.hit->entry) + "]"
                                     : "cache store " + r.hit->cache_path;
    } else {
      rec.reason = std::string(resolve::miss_reason_id(r.reason));
      rec.detail = r.detail;
    }
    resolver->records.push_back(std::move(rec));
    const OpResolutionRecord& kept = resolver->records.back();
    const resolve::Resolution& k = kept.resolution;

    op_resolution o;
    std::memset(&o, 0, sizeof(o));
    o.hit = k.is_hit() ? 1 : 0;
    o.reason = kept.reason.c_str();
    o.detail = kept.detail.c_str();
    o.entry = -1;
    o.format_index = -1;
    if (k.is_hit()) {
      o.entry = k.hit->entry;
      o.format_index = k.hit->format_index;
      o.payload = k.hit->payload.data();
      o.payload_size = k.hit->payload.size();
      o.payload_external = k.hit->payload_external ? 1 : 0;
      o.dims = k.hit->dims.data();
      o.n_dims = k.hit->dims.size();
    }
    o.verified = k.verified ? 1 : 0;
    o.memo_used = k.memo_used ? 1 : 0;
    o.bytes_hashed = k.bytes_hashed;
    o.bytes_to_pack = k.bytes_to_pack;
    o.n_candidates = k.candidates.size();
    *out = o;
    return ok_status();
  });
}

op_status_code op_resolver_store(op_resolver* resolver, const char* source_name,
                                 const op_acceptable_format* format, const uint8_t* type_proto,
                                 size_t type_proto_size, const uint64_t* dims, size_t n_dims,
                                 const void* payload, uint64_t payload_size) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_resolver_store";
    OP_CAPI_REQUIRE(resolver, kFn);
    OP_CAPI_REQUIRE(source_name, kFn);
    OP_CAPI_REQUIRE(format, kFn);
    OP_RETURN_IF_ERROR(check_formats(format, 1, kFn));
    if (n_dims > 0 && dims == nullptr) {
      return invalid_argument(std::string(kFn) + ": dims is null with n_dims " +
                              std::to_string(n_dims));
    }
    if (payload_size > 0 && payload == nullptr) {
      return invalid_argument(std::string(kFn) + ": payload is null with payload_size " +
                              std::to_string(payload_size));
    }
    if (payload_size > SIZE_MAX) return invalid_argument(std::string(kFn) + ": payload too large");
    const std::span<const uint64_t> dim_span(dims, n_dims);
    onnx::StructTypeProto type;
    resolve::PackRequest request;
    request.source_name = source_name;
    if (type_proto != nullptr) {
      if (type_proto_size > size_t(INT32_MAX) ||
          !type.ParseFromArray(type_proto, int(type_proto_size))) {
        return invalid_argument(std::string(kFn) + ": type_proto (" +
                                std::to_string(type_proto_size) +
                                " bytes) is not a serialized StructTypeProto");
      }
      if (type.name() != format->name) {
        return invalid_argument(std::string(kFn) + ": type_proto is named '" + type.name() +
                                "', format is '" + format->name + "'");
      }
      request.formats.push_back(to_format(*format));
    } else {
      // One of this library's formats: the family's pack of this use fixes
      // the type, dims and payload size, and its lineage keys the store.
      pack::FormatInfo info;
      const pack::PackFamily* family = pack::family_of_format(format->name, &info);
      if (family == nullptr || info.version != format->format_version) {
        return not_found(std::string(kFn) + ": '" + format->name + "' version '" +
                         format->format_version +
                         "' is not a format of this library; pass its type_proto");
      }
      const format::Model& m = *resolver->model;
      if (m.count_initializers(source_name) != 1) return ok_status();  // nothing to bind
      std::optional<pack::WeightUse> use;
      for (const pack::ModelWeightUse& u : pack::model_weight_uses(m)) {
        if (u.family == family && u.use.source == source_name) {
          use = u.use;
          break;
        }
      }
      if (!use) {
        return invalid_argument(std::string(kFn) + ": no node of '" + source_name +
                                "' reads it as a weight that format '" + format->name + "' packs");
      }
      Result<pack::PackPlan> plan = family->plan(*use, info, pack::model_content(m), nullptr);
      if (!plan.ok())
        return plan.status().with_context(std::string(kFn) + ": '" + source_name + "'");
      type = plan->type;
      Status s = family->check_entry(*use, info, type, dim_span);
      if (!s.ok()) return s.with_context(std::string(kFn) + ": '" + source_name + "'");
      if (plan->payload_bytes != payload_size) {
        return invalid_argument(std::string(kFn) + ": '" + source_name + "': payload is " +
                                std::to_string(payload_size) + " bytes, format '" + format->name +
                                "' needs " + std::to_string(plan->payload_bytes));
      }
      request = pack::pack_request(*family, *use, device::IsaLevel::kAvx512);
      request.formats.assign(1, to_format(*format));
    }
    return resolver->resolver->store(
        request, request.formats.front(), type, dim_span,
        std::span<const uint8_t>(static_cast<const uint8_t*>(payload), size_t(payload_size)));
  });
}

op_status_code op_resolver_get_totals(const op_resolver* resolver, op_resolver_totals* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(resolver, "op_resolver_get_totals");
    OP_CAPI_REQUIRE(out, "op_resolver_get_totals");
    const resolve::ResolverTotals& t = resolver->resolver->totals();
    *out = op_resolver_totals{t.hits,         t.misses,       t.memo_hits,
                              t.bytes_hashed, t.bytes_mapped, t.bytes_to_pack};
    return ok_status();
  });
}

op_status_code op_builtin_formats(uint32_t layout, int32_t source_type, int32_t host_only,
                                  op_acceptable_format* out, size_t capacity, size_t* n_total) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_builtin_formats";
    OP_CAPI_REQUIRE(n_total, kFn);
    *n_total = 0;
    if (capacity > 0 && out == nullptr) {
      return invalid_argument(std::string(kFn) + ": out is null with capacity " +
                              std::to_string(capacity));
    }
    if (layout > 1) {
      return invalid_argument(std::string(kFn) + ": layout " + std::to_string(layout) +
                              " is not 0 ([K, N]) or 1 ([N, K])");
    }
    if (source_type != OP_DTYPE_FLOAT && source_type != OP_DTYPE_FLOAT16) {
      return invalid_argument(std::string(kFn) + ": source_type " + std::to_string(source_type) +
                              " is not OP_DTYPE_FLOAT or OP_DTYPE_FLOAT16");
    }
    const device::IsaLevel level = host_only ? device::host_isa_level() : device::IsaLevel::kAvx512;
    OP_ASSIGN_OR_RETURN(std::span<const BuiltinFormat* const> list,
                        capi::layout_builtin_formats(layout, source_type, level));
    for (size_t i = 0; i < list.size() && i < capacity; ++i) out[i] = to_c(*list[i]);
    *n_total = list.size();
    return ok_status();
  });
}

op_status_code op_weight_formats(op_model* model, const char* source_name, const char* consumer,
                                 int32_t host_only, op_acceptable_format* out, size_t capacity,
                                 size_t* n_total) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_weight_formats";
    OP_CAPI_REQUIRE(n_total, kFn);
    *n_total = 0;
    OP_CAPI_REQUIRE(model, kFn);
    OP_CAPI_REQUIRE(source_name, kFn);
    if (capacity > 0 && out == nullptr) {
      return invalid_argument(std::string(kFn) + ": out is null with capacity " +
                              std::to_string(capacity));
    }
    const format::Model& m = *model->model;
    const pack::ModelWeightUse* found = nullptr;
    const std::vector<pack::ModelWeightUse> uses = pack::model_weight_uses(m);
    for (const pack::ModelWeightUse& u : uses) {
      if (u.use.source != source_name) continue;
      if (consumer != nullptr && u.use.consumer != consumer) continue;
      found = &u;
      break;
    }
    if (found == nullptr) {
      return not_found(std::string(kFn) + ": no node" +
                       (consumer != nullptr ? " '" + std::string(consumer) + "'" : "") +
                       " reads initializer '" + source_name + "' as a weight this library packs");
    }
    const device::IsaLevel level = host_only ? device::host_isa_level() : device::IsaLevel::kAvx512;
    const pack::ContentFn content = pack::model_content(m);
    std::vector<const BuiltinFormat*> list;
    for (const pack::FormatInfo& f : found->family->accepted(found->use, level)) {
      OP_ASSIGN_OR_RETURN(BuiltinFormat b,
                          capi::make_builtin(found->family, found->use, f, content));
      b.use.model = nullptr;  // the handle may be freed before the resolver
      model->formats.push_back(std::move(b));
      list.push_back(&model->formats.back());
    }
    for (size_t i = 0; i < list.size() && i < capacity; ++i) out[i] = to_c(*list[i]);
    *n_total = list.size();
    return ok_status();
  });
}

}  // extern "C"
