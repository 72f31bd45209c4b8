// onnx_prepack._onnx_prepack.GenModel, GeneratorParams, Generator and
// generate: the engine's Generator (include/onnx_prepack/generator.hpp) for
// the package's onnxruntime-genai-shaped submodule onnx_prepack.genai
// (docs/python.md, "Generation").
#pragma once

#include <pybind11/pybind11.h>

namespace onnx_prepack::python {

void bind_generator(pybind11::module_& m);

}  // namespace onnx_prepack::python
