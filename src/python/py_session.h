// onnx_prepack.InferenceSession and NodeArg (docs/python.md).
#pragma once

#include <pybind11/pybind11.h>

namespace onnx_prepack::python {

void bind_session(pybind11::module_& m);

}  // namespace onnx_prepack::python
