// Hand-built compiled entries for the resolver tests: an "identity" format
// (the source floats copied, one FLOAT per element) described by an inline
// StructTypeProto, with device, runtime, format and digest fields chosen per
// test so that each loading rule can be broken on its own.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "digest/digest.h"
#include "format/model.h"
#include "onnx_prepack.pb.h"
#include "resolve/payload_check.h"
#include "resolve/resolver.h"
#include "testing/test_models.h"

namespace onnx_prepack::resolve::testing_fixture {

inline constexpr const char* kFormat = "test_f32_copy";
inline constexpr const char* kFormatVersion = "1";

struct EntrySpec {
  std::string source = "W1";
  std::string format = kFormat;
  std::string format_version = kFormatVersion;
  std::string device_type = "cpu";
  std::string architecture = "x86_64";
  std::string runtime = "onnx-prepack";
  std::string runtime_version = "1";
  std::string algorithm = "blake3";
  int device_index = -1;     // >= 0: use this index instead of the entry's device
  bool stale = false;        // flip one digest bit
  int payload_delta = 0;     // bytes added to (or removed from) the payload
  float fill_offset = 0.0f;  // payload = source + offset (to tell entries apart)
};

inline onnx::StructTypeProto identity_type(const std::string& name, const std::string& version) {
  onnx::StructTypeProto t;
  t.set_name(name);
  auto* md = t.add_metadata_props();
  md->set_key("format_version");
  md->set_value(version);
  t.add_dims_param("n");
  auto* arr = t.mutable_array();
  arr->mutable_element_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  arr->set_dims_index(0);
  return t;
}

inline std::vector<float> floats_of(const onnx::TensorProto& t) {
  std::vector<float> v(t.raw_data().size() / 4);
  std::memcpy(v.data(), t.raw_data().data(), v.size() * 4);
  return v;
}

inline const onnx::TensorProto* find_init(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

// Appends one entry (and its device, deduplicated) to `m`.
inline void add_entry(onnx::ModelProto& m, const EntrySpec& spec) {
  onnx::DeviceProto dev;
  dev.set_type(spec.device_type);
  dev.set_architecture(spec.architecture);
  dev.set_runtime(spec.runtime);
  dev.set_runtime_version(spec.runtime_version);
  int device = -1;
  for (int i = 0; i < m.devices_size(); ++i) {
    if (m.devices(i).SerializeAsString() == dev.SerializeAsString()) device = i;
  }
  if (device < 0) {
    *m.add_devices() = dev;
    device = m.devices_size() - 1;
  }
  const onnx::TensorProto* src = find_init(m, spec.source);
  std::vector<float> values = src ? floats_of(*src) : std::vector<float>(4, 0.0f);
  for (float& v : values) v += spec.fill_offset;
  std::string payload(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  if (spec.payload_delta < 0) payload.resize(payload.size() - size_t(-spec.payload_delta));
  if (spec.payload_delta > 0) payload.append(size_t(spec.payload_delta), '\0');

  onnx::CompiledTensorProto* ct = m.add_compiled_tensors();
  ct->set_source_name(spec.source);
  ct->set_device(spec.device_index >= 0 ? spec.device_index : device);
  ct->set_digest_algorithm(spec.algorithm);
  onnx::StructProto* v = ct->mutable_value();
  v->set_type(-1);
  *v->mutable_struct_type() = identity_type(spec.format, spec.format_version);
  v->add_dims(values.size());
  v->set_raw_data(payload);
  digest::Digest d{};
  if (src != nullptr) {
    auto model = format::Model::from_proto(m, "");
    const auto alg =
        digest::algorithm_from_name(spec.algorithm).value_or(digest::Algorithm::kBlake3);
    auto td = digest::digest_tensor(*model, *model->find_initializer(spec.source), spec.source,
                                    {alg, nullptr});
    if (td.ok()) d = td->digest;
  }
  if (spec.stale) d[0] ^= 1;
  ct->set_source_digest(std::string(reinterpret_cast<const char*>(d.data()), d.size()));
  if (auto alg = digest::algorithm_from_name(spec.algorithm)) {
    // format.md §4.6: every entry a writer makes records its payload digest, bound to
    // the source digest, type and dims set above.
    set_payload_digest(*ct, v->struct_type(), *alg,
                       {reinterpret_cast<const uint8_t*>(payload.data()), payload.size()});
  }
}

inline AcceptableFormat acceptable(const std::string& name = kFormat,
                                   const std::string& version = kFormatVersion,
                                   const std::string& arch = "") {
  AcceptableFormat f;
  f.name = name;
  f.format_version = version;
  f.required_architecture = arch;
  return f;
}

inline PackRequest request(const std::string& source,
                           std::vector<AcceptableFormat> formats = {acceptable()}) {
  PackRequest r;
  r.source_name = source;
  r.formats = std::move(formats);
  return r;
}

// A host with only the x86-64 baseline plus what `features` lists.
inline device::HostDescription host(const std::string& arch = "x86_64-v3") {
  return device::HostDescription::pretend(arch).value();
}

}  // namespace onnx_prepack::resolve::testing_fixture
