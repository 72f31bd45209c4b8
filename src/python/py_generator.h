// onnx_prepack._onnx_prepack.Generator, generate and genai_model: the engine's
// token generation (include/onnx_prepack/generator.hpp) for the package's
// onnxruntime-genai-shaped onnx_prepack.genai (src/python/onnx_prepack/genai.py).
#pragma once

#include <pybind11/pybind11.h>

namespace onnx_prepack::python {

void bind_generator(pybind11::module_& m);

}  // namespace onnx_prepack::python
