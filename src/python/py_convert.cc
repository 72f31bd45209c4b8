#include "python/py_convert.h"

#include "runtime/tensor.h"

namespace onnx_prepack::python {

void throw_status(const Status& s) {
  const std::string& m = s.message();
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kDataLoss:
      throw py::value_error(m);
    case StatusCode::kNotFound:
      PyErr_SetString(PyExc_FileNotFoundError, m.c_str());
      throw py::error_already_set();
    case StatusCode::kIoError:
      PyErr_SetString(PyExc_OSError, m.c_str());
      throw py::error_already_set();
    case StatusCode::kUnimplemented:
      PyErr_SetString(PyExc_NotImplementedError, m.c_str());
      throw py::error_already_set();
    case StatusCode::kResourceExhausted:
      PyErr_SetString(PyExc_MemoryError, m.c_str());
      throw py::error_already_set();
    default:
      throw std::runtime_error(m);
  }
}

py::object to_python(const base::Json& j) {
  // Looked up per call: a static py::object would be released after the
  // interpreter is finalized.
  return py::module_::import("json").attr("loads")(j.dump(0));
}

namespace {

struct TypeRow {
  int32_t onnx;
  const char* numpy;  // numpy dtype code, "" when numpy has none
  const char* ort;
};

constexpr TypeRow kTypes[] = {
    {runtime::kFloat, "float32", "float"},   {runtime::kUint8, "uint8", "uint8"},
    {runtime::kInt8, "int8", "int8"},        {runtime::kUint16, "uint16", "uint16"},
    {runtime::kInt16, "int16", "int16"},     {runtime::kInt32, "int32", "int32"},
    {runtime::kInt64, "int64", "int64"},     {runtime::kString, "", "string"},
    {runtime::kBool, "bool", "bool"},        {runtime::kFloat16, "float16", "float16"},
    {runtime::kDouble, "float64", "double"}, {runtime::kUint32, "uint32", "uint32"},
    {runtime::kUint64, "uint64", "uint64"},  {runtime::kBfloat16, "", "bfloat16"},
};

}  // namespace

py::dtype dtype_of(int32_t onnx_type, const std::string& what) {
  for (const TypeRow& r : kTypes) {
    if (r.onnx == onnx_type && r.numpy[0] != '\0') return py::dtype(r.numpy);
  }
  throw py::value_error(what + ": element type " + runtime::dtype_name(onnx_type) +
                        " has no numpy dtype");
}

int32_t onnx_type_of(const py::dtype& dtype) {
  for (const TypeRow& r : kTypes) {
    if (r.numpy[0] != '\0' && dtype.is(py::dtype(r.numpy))) return r.onnx;
    if (r.numpy[0] != '\0' && py::bool_(dtype.attr("__eq__")(py::dtype(r.numpy)))) return r.onnx;
  }
  return 0;
}

std::string ort_type_string(int32_t onnx_type) {
  for (const TypeRow& r : kTypes) {
    if (r.onnx == onnx_type) return std::string("tensor(") + r.ort + ")";
  }
  return "tensor(undefined)";
}

ModelSource model_source(const py::object& obj) {
  ModelSource src;
  if (py::isinstance<py::bytes>(obj) || py::isinstance<py::bytearray>(obj)) {
    src.is_path = false;
    src.bytes = py::bytes(obj).cast<std::string>();
  } else if (py::hasattr(obj, "SerializeToString")) {  // onnx.ModelProto
    src.is_path = false;
    src.bytes = obj.attr("SerializeToString")().cast<py::bytes>().cast<std::string>();
  } else {
    src.path = py::str(py::module_::import("os").attr("fspath")(obj)).cast<std::string>();
  }
  return src;
}

VerifyPolicy verify_policy_arg(const std::string& verify) {
  std::optional<VerifyPolicy> p = verify_policy_from_name(verify);
  if (!p) throw_status(invalid_argument("verify must be full, memo or off, got '" + verify + "'"));
  return *p;
}

WeightMode weight_mode_arg(const std::string& weights) {
  std::optional<WeightMode> m = weight_mode_from_name(weights);
  if (!m) throw_status(invalid_argument("weights must be packed or plain, got '" + weights + "'"));
  return *m;
}

CacheLocation cache_location_arg(const py::object& cache) {
  if (cache.is_none()) return CacheLocation{};
  return cache_location_from_arg(
      py::str(py::module_::import("os").attr("fspath")(cache)).cast<std::string>());
}

}  // namespace onnx_prepack::python
