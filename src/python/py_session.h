// onnx_prepack.InferenceSession and NodeArg (docs/python.md).
#pragma once

#include <pybind11/pybind11.h>

#include "onnx_prepack/engine.hpp"

namespace onnx_prepack::python {

void bind_session(pybind11::module_& m);
// The engine of a `_onnx_prepack.Session` object (TypeError for anything else);
// it lives as long as that object (py_generator.cc keeps a reference).
Engine& session_engine(const pybind11::object& session);

}  // namespace onnx_prepack::python
