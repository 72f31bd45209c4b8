// The Python module `onnx_prepack._onnx_prepack` (docs/python.md): the engine session, and
// compile / explain / check / digest / inspect returning the CLI's JSON
// documents as dicts and lists (built by the same library code).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "check/check.h"
#include "digest/digest.h"
#include "engine/engine_options.h"
#include "engine/explain.h"
#include "engine/model_reports.h"
#include "engine/report_json.h"
#include "format/model.h"
#include "format/tensor_info.h"
#include "onnx_prepack/engine.hpp"
#include "python/py_convert.h"
#include "python/py_generator.h"
#include "python/py_session.h"

namespace onnx_prepack::python {
namespace {

std::string fspath(const py::object& p) {
  return py::str(py::module_::import("os").attr("fspath")(p)).cast<std::string>();
}

std::unique_ptr<format::Model> load_model(const py::object& model, const py::object& base_dir) {
  ModelSource src = model_source(model);
  std::string base = base_dir.is_none() ? std::string(".") : fspath(base_dir);
  Result<std::unique_ptr<format::Model>> r = internal_error("unreachable");
  {
    py::gil_scoped_release release;
    r = src.is_path ? format::Model::load(src.path)
                    : format::Model::parse(
                          std::span<const uint8_t>(
                              reinterpret_cast<const uint8_t*>(src.bytes.data()), src.bytes.size()),
                          base);
  }
  return value_or_throw(std::move(r));
}

py::object py_compile(const py::object& src, const py::object& dst, const py::object& targets,
                      const std::string& digest, bool lift_constants, uint32_t threads, bool memo,
                      const py::object& memo_dir, bool reference_source_data,
                      const std::string& qdq) {
  CompileOptions o;
  o.qdq = qdq_mode_arg(qdq);
  if (!targets.is_none()) {
    o.targets.clear();
    if (py::isinstance<py::str>(targets)) {
      o.targets.push_back(targets.cast<std::string>());
    } else {
      for (auto t : targets) o.targets.push_back(py::str(t));
    }
  }
  o.digest = digest;
  o.lift_constants = lift_constants;
  o.threads = threads;
  o.memo = memo;
  if (!memo_dir.is_none()) o.memo_dir = fspath(memo_dir);
  o.reference_source_data = reference_source_data;
  const std::string s = fspath(src), d = fspath(dst);
  Result<CompileSummary> r = internal_error("unreachable");
  {
    py::gil_scoped_release release;
    r = compile_model(s, d, o);
  }
  return to_python(engine::compile_json(value_or_throw(std::move(r))));
}

py::object py_explain(const py::object& path, const std::string& verify, const py::object& arch,
                      const py::object& cache, const py::object& memo_dir,
                      const std::vector<std::string>& inputs) {
  engine::ExplainOptions o;
  o.verify = verify_policy_arg(verify);
  if (!arch.is_none()) o.arch = py::str(arch);
  o.cache = cache_location_arg(cache);
  if (!memo_dir.is_none()) o.memo_dir = fspath(memo_dir);
  o.fed_inputs = inputs;
  const std::string p = fspath(path);
  Result<engine::ExplainReport> r = internal_error("unreachable");
  {
    py::gil_scoped_release release;
    r = engine::explain_model(p, o);
  }
  return to_python(engine::explain_json(value_or_throw(std::move(r))));
}

py::object py_check(const py::object& model, const py::object& base_dir) {
  std::unique_ptr<format::Model> m = load_model(model, base_dir);
  std::optional<check::CheckReport> report;
  {
    py::gil_scoped_release release;
    report = check::check_model(*m);
  }
  return to_python(engine::check_json(*report));
}

// One entry per initializer, as `digest --json`; an initializer without a
// digest raises ValueError naming it (the CLI reports it and exits 1).
py::object py_digest(const py::object& model, const std::string& algorithm, uint32_t threads,
                     const py::object& base_dir) {
  const auto alg = digest::algorithm_from_name(algorithm);
  if (!alg) {
    throw_invalid("algorithm '" + algorithm + "' is not known, expected blake3 or sha256");
  }
  std::unique_ptr<format::Model> m = load_model(model, base_dir);
  std::unique_ptr<base::ThreadPool> own;
  const digest::DigestOptions options{*alg, engine::pool_for(threads, own)};
  base::Json list = base::Json::array();
  const auto& inits = m->proto().graph().initializer();
  for (int i = 0; i < inits.size(); ++i) {
    const onnx::TensorProto& t = inits[i];
    Result<digest::TensorDigest> d = internal_error("unreachable");
    {
      py::gil_scoped_release release;
      d = digest::digest_tensor(*m, t, format::tensor_context(i, t.name()), options);
    }
    list.push_back(engine::digest_json(t, value_or_throw(std::move(d)), *alg));
  }
  return to_python(list);
}

py::object py_inspect(const py::object& model, const py::object& base_dir) {
  std::unique_ptr<format::Model> m = load_model(model, base_dir);
  return to_python(engine::inspect_json(*m));
}

}  // namespace
}  // namespace onnx_prepack::python

// The compiled core of the package `onnx_prepack` (src/python/onnx_prepack/
// __init__.py re-exports it and adds onnxruntime's Python-level classes).
PYBIND11_MODULE(_onnx_prepack, m) {
  using namespace onnx_prepack;          // NOLINT: the module's definition
  using namespace onnx_prepack::python;  // NOLINT
  m.doc() = "onnx-prepack: ONNX models with persisted packed weights, on a CPU runtime";
  m.attr("__version__") = ONNX_PREPACK_VERSION_STRING;
  register_exceptions(m);
  bind_session(m);
  bind_generator(m);
  m.def("compile", &py_compile, py::arg("src"), py::arg("dst"), py::arg("targets") = py::none(),
        py::arg("digest") = "blake3", py::arg("lift_constants") = true,
        py::arg("threads") = kDefaultThreads, py::arg("memo") = true,
        py::arg("memo_dir") = py::none(), py::arg("reference_source_data") = false,
        py::arg("qdq") = std::string(qdq_mode_name(kDefaultQdqMode)),
        "Packs every eligible weight (every pack family) for each target and writes dst, which "
        "stands alone unless reference_source_data; returns `compile --json`.");
  m.def("explain", &py_explain, py::arg("path"),
        py::arg("verify") = std::string(verify_policy_name(kDefaultVerifyPolicy)),
        py::arg("arch") = py::none(), py::arg("cache") = py::none(),
        py::arg("memo_dir") = py::none(), py::arg("inputs") = std::vector<std::string>(),
        "The resolver's decision per weight; returns `explain --json`.");
  m.def("check", &py_check, py::arg("model"), py::arg("base_dir") = py::none(),
        "Structural check; returns `check --json`.");
  m.def("digest", &py_digest, py::arg("model"), py::arg("algorithm") = "blake3",
        py::arg("threads") = kDefaultThreads, py::arg("base_dir") = py::none(),
        "Canonical digests of the initializers; returns `digest --json`.");
  m.def("inspect", &py_inspect, py::arg("model"), py::arg("base_dir") = py::none(),
        "Model summary; returns `inspect --json`.");
}
