// The plan's records, shared by the session's translation units (session.cc
// builds them, session_fusion.cc rewrites chains of steps).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/session.h"
#include "runtime/tensor.h"

namespace onnx_prepack::runtime {

struct Session::Value {
  std::string name;
  ValueDesc desc;                      // dtype, shape, known value
  std::optional<HostTensor> constant;  // known at plan time
  bool is_input = false;
  bool runtime = false;  // computed or fed at run time
  int alias_of = -1;     // runtime value whose storage this one shares
  bool bound = false;    // storage the caller provides at run_bound (set_bound_values)
  int def = -1;          // step that writes it (-1: fed input)
  int last = -1;         // last step that reads it
  uint64_t offset = 0;
  void* ptr = nullptr;
};

struct Session::Step {
  int node = -1;
  std::unique_ptr<Kernel> kernel;
  std::vector<int> in, out;  // value ids, -1 for absent
  std::vector<void*> in_ptr, out_ptr;
  const char* label = nullptr;  // the profile's name for it; null: the node's op type
  // Every output holds zero elements: nothing to write, so the kernel is not
  // run (its outer loop may still count 2^40 rows of an empty axis).
  bool empty = false;
};

}  // namespace onnx_prepack::runtime
