// libFuzzer target: arbitrary bytes through model parsing, the checker and the
// structured reader. Any crash, leak, UB, timeout or unbounded allocation is a
// bug: bad input must come back as an error or a diagnostic.
#include <cstddef>
#include <cstdint>
#include <span>

#include "check/check.h"
#include "format/model.h"
#include "types/struct_type.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // External data is resolved below a folder that does not exist, so no input
  // can make the checker open files of the machine running the fuzzer.
  auto model = onnx_prepack::format::Model::parse({data, size}, "/nonexistent-onnx-prepack-fuzz");
  if (!model.ok()) return 0;
  onnx_prepack::check::CheckReport report = onnx_prepack::check::check_model(**model);
  // Entries the checker accepts must be readable by the structured reader.
  const auto& proto = (*model)->proto();
  for (int k = 0; k < proto.compiled_tensors_size(); ++k) {
    if (report.invalid_compiled_tensors.count(k)) continue;
    const auto& value = proto.compiled_tensors(k).value();
    if (value.external_data_size() > 0) continue;
    auto type = onnx_prepack::types::value_type(proto, value);
    if (!type.ok()) __builtin_trap();  // the checker said it resolves
    std::span<const uint64_t> dims(value.dims().data(), size_t(value.dims_size()));
    const auto& raw = value.raw_data();
    auto leaves = onnx_prepack::types::read_leaves(
        proto.struct_types(), **type, dims,
        {reinterpret_cast<const uint8_t*>(raw.data()), raw.size()});
    if (!leaves.ok()) __builtin_trap();  // checker and reader disagree
  }
  return 0;
}
