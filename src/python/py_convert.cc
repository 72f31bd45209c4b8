#include "python/py_convert.h"

#include <string_view>
#include <vector>

#include "runtime/tensor.h"

namespace onnx_prepack::python {

namespace {

// The classes, created once by register_exceptions (they live as long as the
// interpreter: the module is never unloaded).
struct ExceptionClass {
  const char* name;
  std::vector<PyObject*> builtins;
  const char* doc;
  PyObject* type = nullptr;
  const char* parent = nullptr;  // a class listed before it, in place of OnnxPrepackError
};

PyObject* g_base = nullptr;

std::vector<ExceptionClass>& exception_classes() {
  static std::vector<ExceptionClass> classes = {
      {"Fail", {PyExc_RuntimeError, PyExc_OSError}, "A failure: the operating system refused."},
      {"InvalidArgument", {PyExc_ValueError}, "A bad argument, feed or option."},
      {"NoSuchFile", {PyExc_FileNotFoundError}, "The model (or a file it names) does not exist."},
      {"NoModel", {PyExc_FileNotFoundError}, "No model was given or found."},
      {"EngineError",
       {PyExc_RuntimeError, PyExc_MemoryError},
       "A configured limit was hit (tensor size, memory budget)."},
      {"RuntimeException", {PyExc_RuntimeError}, "The run failed (an engine error)."},
      {"InvalidProtobuf", {PyExc_ValueError}, "The model bytes are corrupt or truncated."},
      {"ModelLoaded", {PyExc_RuntimeError}, "The model is already loaded."},
      {"NotImplemented",
       {PyExc_NotImplementedError},
       "Valid but not supported by this build (an operator, an option)."},
      {"InvalidGraph", {PyExc_ValueError}, "The graph is not valid."},
      {"EPFail", {PyExc_RuntimeError}, "An execution provider could not be used."},
      // A Fail, as onnxruntime's terminate flag raises, and a TimeoutError.
      {"DeadlineExceeded",
       {PyExc_TimeoutError},
       "The run passed RunOptions.deadline_ms (a Fail and a TimeoutError).",
       nullptr,
       "Fail"},
  };
  return classes;
}

PyObject* exception_class(const char* name, PyObject* fallback) {
  for (const ExceptionClass& c : exception_classes()) {
    if (std::string_view(c.name) == name && c.type != nullptr) return c.type;
  }
  return fallback;
}

[[noreturn]] void raise_as(const char* name, PyObject* fallback, const std::string& message) {
  PyErr_SetString(exception_class(name, fallback), message.c_str());
  throw py::error_already_set();
}

}  // namespace

void register_exceptions(py::module_& m) {
  g_base = PyErr_NewExceptionWithDoc("onnx_prepack.OnnxPrepackError",
                                     "The base class of every onnx_prepack error.", PyExc_Exception,
                                     nullptr);
  if (g_base == nullptr) throw py::error_already_set();
  m.attr("OnnxPrepackError") = py::reinterpret_borrow<py::object>(g_base);
  for (ExceptionClass& c : exception_classes()) {
    py::tuple bases(1 + c.builtins.size());
    bases[0] = py::reinterpret_borrow<py::object>(
        c.parent != nullptr ? exception_class(c.parent, g_base) : g_base);
    for (size_t i = 0; i < c.builtins.size(); ++i) {
      bases[i + 1] = py::reinterpret_borrow<py::object>(c.builtins[i]);
    }
    const std::string qualified = std::string("onnx_prepack.") + c.name;
    c.type = PyErr_NewExceptionWithDoc(qualified.c_str(), c.doc, bases.ptr(), nullptr);
    if (c.type == nullptr) throw py::error_already_set();
    m.attr(c.name) = py::reinterpret_borrow<py::object>(c.type);
  }
}

void throw_invalid(const std::string& message) {
  raise_as("InvalidArgument", PyExc_ValueError, message);
}

void throw_status(const Status& s) {
  const std::string& m = s.message();
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      raise_as("InvalidArgument", PyExc_ValueError, m);
    case StatusCode::kDataLoss:
      raise_as("InvalidProtobuf", PyExc_ValueError, m);
    case StatusCode::kNotFound:
      raise_as("NoSuchFile", PyExc_FileNotFoundError, m);
    case StatusCode::kIoError:
      raise_as("Fail", PyExc_OSError, m);
    case StatusCode::kUnimplemented:
      raise_as("NotImplemented", PyExc_NotImplementedError, m);
    case StatusCode::kResourceExhausted:
      raise_as("EngineError", PyExc_MemoryError, m);
    case StatusCode::kDeadlineExceeded:
      raise_as("DeadlineExceeded", PyExc_TimeoutError, m);
    case StatusCode::kCancelled:  // onnxruntime raises Fail for its terminate flag
      raise_as("Fail", PyExc_RuntimeError, m);
    default:
      raise_as("RuntimeException", PyExc_RuntimeError, m);
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
  if (onnx_type == runtime::kBfloat16) {
    try {
      return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
    } catch (const py::error_already_set&) {
      return py::dtype("uint16");  // the raw bits
    }
  }
  for (const TypeRow& r : kTypes) {
    if (r.onnx == onnx_type && r.numpy[0] != '\0') return py::dtype(r.numpy);
  }
  throw_invalid(what + ": element type " + std::string(runtime::dtype_name(onnx_type)) +
                " has no numpy dtype");
}

int32_t onnx_type_of(const py::dtype& dtype) {
  for (const TypeRow& r : kTypes) {
    if (r.numpy[0] != '\0' && dtype.is(py::dtype(r.numpy))) return r.onnx;
    if (r.numpy[0] != '\0' && py::bool_(dtype.attr("__eq__")(py::dtype(r.numpy)))) return r.onnx;
  }
  // ml_dtypes.bfloat16 (a numpy extension dtype named "bfloat16", 2 bytes).
  if (dtype.itemsize() == 2 && py::str(dtype.attr("name")).cast<std::string>() == "bfloat16") {
    return runtime::kBfloat16;
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

QdqMode qdq_mode_arg(const std::string& qdq) {
  std::optional<QdqMode> m = qdq_mode_from_name(qdq);
  if (!m) throw_status(invalid_argument("qdq must be exact or integer, got '" + qdq + "'"));
  return *m;
}

CacheLocation cache_location_arg(const py::object& cache) {
  if (cache.is_none()) return CacheLocation{};
  return cache_location_from_arg(
      py::str(py::module_::import("os").attr("fspath")(cache)).cast<std::string>());
}

}  // namespace onnx_prepack::python
