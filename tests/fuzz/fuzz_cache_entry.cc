// libFuzzer target: the cache store's entry reader. The input is an entry as
// stored (u32le length, entry.onnx, then entry.data); it is placed in a store
// under the key its own fields name (so the reader gets past the key check),
// then looked up, its payload checked (format.md §4.6) and, as a write-back would,
// replaced by a good entry when it is not sound. Nothing may crash, and after
// the write-back the lookup must give the good payload.
#include <sys/stat.h>

#include <filesystem>

#include "digest/digest.h"
#include "format/metadata.h"
#include "fuzz_common.h"
#include "resolve/cache_store.h"
#include "resolve/payload_check.h"
#include "types/struct_type.h"

using namespace onnx_prepack;

namespace {

// The key an entry's own fields name; a fixed one when they do not parse.
resolve::CacheKey key_of(std::span<const uint8_t> entry_model) {
  resolve::CacheKey key;
  key.format = "fuzz";
  key.format_version = "1";
  key.runtime = "onnx-prepack";
  key.runtime_version = "1";
  onnx::ModelProto p;
  if (!p.ParseFromArray(entry_model.data(), int(entry_model.size())) ||
      p.compiled_tensors_size() != 1 || p.devices_size() != 1 || p.struct_types_size() != 1) {
    return key;
  }
  const auto& ct = p.compiled_tensors(0);
  if (auto alg = digest::algorithm_from_name(ct.digest_algorithm())) key.algorithm = *alg;
  if (ct.source_digest().size() == key.source_digest.size()) {
    std::memcpy(key.source_digest.data(), ct.source_digest().data(), key.source_digest.size());
  }
  key.format = p.struct_types(0).name();
  key.format_version = format::metadata_value(p.struct_types(0).metadata_props(), "format_version");
  key.runtime = p.devices(0).runtime();
  key.runtime_version = p.devices(0).runtime_version();
  return key;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  const fuzz::TwoParts parts = fuzz::split(data, size);
  const std::string dir = fuzz::scratch_dir() + "/store";
  std::error_code ec;
  fs::remove_all(dir, ec);
  auto store = resolve::CacheStore::open(dir, resolve::CacheMode::kReadWrite, 1 << 24);
  if (!store.ok()) __builtin_trap();  // a fresh folder under our scratch dir
  const resolve::CacheKey key = key_of(parts.first);
  const std::string entry = dir + "/entries/" + key.id();
  fs::create_directories(entry, ec);
  fuzz::write_file(entry + "/entry.onnx", parts.first);
  fuzz::write_file(entry + "/entry.data", parts.rest);

  bool sound = false;
  auto found = (*store)->lookup(key);
  if (found.ok() && found->has_value()) {
    const onnx::ModelProto& m = (**found).model->proto();
    const auto& ct = m.compiled_tensors(0);
    resolve::PayloadLocation where;
    where.path = (**found).data_path;
    where.identity = (**found).data_identity;
    where.length = (**found).payload.size();
    auto pc = resolve::check_payload(ct, resolve::entry_struct_type(m, ct), (**found).payload, true,
                                     nullptr, where, nullptr, entry);
    sound = pc.verdict == resolve::PayloadVerdict::kIntact;
  }
  if (sound) return 0;
  // The write-back of a repack: a good entry under the same key must replace it.
  onnx::DeviceProto dev;
  dev.set_type("cpu");
  dev.set_architecture("x86_64");
  dev.set_runtime(key.runtime);
  dev.set_runtime_version(key.runtime_version);
  onnx::StructTypeProto type;
  type.set_name(key.format);
  auto* fv = type.add_metadata_props();
  fv->set_key("format_version");
  fv->set_value(key.format_version);
  auto* arr = type.mutable_array();
  arr->mutable_element_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  arr->mutable_element_type()->mutable_tensor_type()->mutable_shape();
  arr->set_dims_index(0);
  const std::vector<uint64_t> dims{4};
  const uint8_t payload[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  Status s = (*store)->publish(key, "w", dev, type, dims, payload);
  if (!s.ok()) return 0;  // e.g. a format name the checker refuses: no entry written
  auto again = (*store)->lookup(key);
  if (!again.ok() || !again->has_value() || (**again).payload.size() != sizeof payload ||
      std::memcmp((**again).payload.data(), payload, sizeof payload) != 0) {
    __builtin_trap();  // a damaged entry survived the write-back
  }
  return 0;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("ONNX_PREPACK_MEMORY_BUDGET", "256M", 1);
  return 0;
}
