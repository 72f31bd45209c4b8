// The compiled-tensor checker (format.md §3, 4.1, 4.2): every structural problem of a
// model's struct types, devices and compiled tensors, independent of the host.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "format/model.h"

namespace onnx_prepack::check {

struct Diagnostic {
  std::string rule;     // stable id from check/rules.h, e.g. "struct.size_mismatch"
  std::string path;     // "compiled_tensors[3].value.struct_type.structure.field[1]"
  std::string message;  // names the objects and the numbers
};

struct CheckReport {
  std::vector<Diagnostic> errors;
  std::vector<Diagnostic> warnings;  // load-time matters: unknown algorithm, unknown arch grammar
  // Indices of compiled_tensors that are unusable because of an error in the
  // entry itself, its struct type or its device; a runtime ignores them.
  std::set<int> invalid_compiled_tensors;
  bool valid() const { return errors.empty(); }
};

struct CheckOptions {
  uint32_t max_nesting_depth = 64;
  uint32_t max_fields_per_structure = 4096;
  uint64_t max_constant_bytes = uint64_t(64) << 20;
  uint32_t max_catalogue_entries = 65536;
  // Canonical leaves of one type (decision, docs/struct-types.md).
  uint64_t max_leaves = 65536;
  // Check that external payloads exist and have the declared length (needs I/O).
  bool check_external_payloads = true;
};

CheckReport check_model(const format::Model& model, const CheckOptions& options = {});

}  // namespace onnx_prepack::check
