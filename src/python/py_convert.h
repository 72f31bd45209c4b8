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

// Creates the module's exception classes (docs/python.md "Errors"): the base
// OnnxPrepackError and onnxruntime's names, each also a subclass of the builtin
// exception raised before they existed (InvalidArgument is a ValueError, ...).
void register_exceptions(py::module_& m);

// Raises the Python exception for `s`: InvalidArgument (ValueError) for invalid
// arguments and out of range, InvalidProtobuf (ValueError) for corrupt input,
// NoSuchFile (FileNotFoundError), Fail (OSError and RuntimeError) when the
// operating system refuses, NotImplemented (NotImplementedError), EngineError
// (MemoryError and RuntimeError) past a limit, RuntimeException (RuntimeError).
[[noreturn]] void throw_status(const Status& s);
// Raises InvalidArgument (a ValueError) with `message`.
[[noreturn]] void throw_invalid(const std::string& message);

template <typename T>
T value_or_throw(Result<T> r) {
  if (!r.ok()) throw_status(r.status());
  return std::move(r).value();
}

// The typed options from their keyword strings (ValueError naming what is accepted).
VerifyPolicy verify_policy_arg(const std::string& verify);
WeightMode weight_mode_arg(const std::string& weights);
QdqMode qdq_mode_arg(const std::string& qdq);
// A `cache` keyword: None or "off" -> no store, else a folder (str or os.PathLike).
CacheLocation cache_location_arg(const py::object& cache);

// The document as dicts, lists, str, int, float, bool and None (via json.loads:
// the CLI's serializer is the one source of the keys and values).
py::object to_python(const base::Json& j);

// numpy dtype of an ONNX element type; throws ValueError naming `what` for
// types numpy lacks (string). bfloat16 is ml_dtypes.bfloat16 when that module
// is installed, else uint16 (the raw bits).
py::dtype dtype_of(int32_t onnx_type, const std::string& what);
// ONNX element type of a numpy dtype, 0 when none matches (ml_dtypes.bfloat16
// gives bfloat16; uint16 gives uint16).
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
