// Conversions shared by the Python module's files: Status -> Python exception,
// our JSON -> Python objects, ONNX element types <-> numpy dtypes and ORT's
// type strings.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "base/json.h"
#include "onnx_prepack/options.hpp"
#include "onnx_prepack/status.h"

namespace onnx_prepack::python {

namespace py = pybind11;

// Raises the Python exception for `s` (ValueError for invalid arguments,
// FileNotFoundError, OSError, NotImplementedError, MemoryError, RuntimeError).
[[noreturn]] void throw_status(const Status& s);

template <typename T>
T value_or_throw(Result<T> r) {
  if (!r.ok()) throw_status(r.status());
  return std::move(r).value();
}

// The typed options from their keyword strings (ValueError naming what is accepted).
VerifyPolicy verify_policy_arg(const std::string& verify);
WeightMode weight_mode_arg(const std::string& weights);
// A `cache` keyword: None or "off" -> no store, else a folder (str or os.PathLike).
CacheLocation cache_location_arg(const py::object& cache);

// The document as dicts, lists, str, int, float, bool and None (via json.loads:
// the CLI's serializer is the one source of the keys and values).
py::object to_python(const base::Json& j);

// numpy dtype of an ONNX element type; throws ValueError naming `what` for
// types numpy lacks (bfloat16, string).
py::dtype dtype_of(int32_t onnx_type, const std::string& what);
// ONNX element type of a numpy dtype, 0 when none matches.
int32_t onnx_type_of(const py::dtype& dtype);
// "tensor(float)", as onnxruntime's NodeArg.type.
std::string ort_type_string(int32_t onnx_type);

// A model argument: a path (str or os.PathLike), bytes, or an onnx.ModelProto.
struct ModelSource {
  std::string path;   // set for a path
  std::string bytes;  // serialized ModelProto otherwise
  bool is_path = true;
};
ModelSource model_source(const py::object& obj);

}  // namespace onnx_prepack::python
