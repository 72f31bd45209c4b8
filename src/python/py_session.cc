// onnx_prepack.InferenceSession: onnxruntime's conventions over the engine.
// Inputs are read in place when C-contiguous and of the declared type; outputs
// are numpy arrays over the engine's output buffers (no copy). The GIL is
// released while the engine loads and runs; the engine serializes runs.
#include "python/py_session.h"

#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/report_json.h"
#include "format/model.h"
#include "onnx_prepack/engine.hpp"
#include "python/py_convert.h"
#include "runtime/prepared_weights.h"
#include "runtime/session.h"

namespace onnx_prepack::python {
namespace {

// onnxruntime's NodeArg: name, shape (ints, dim_param strings, None), type.
struct NodeArg {
  std::string name;
  py::object shape;
  std::string type;
};

NodeArg node_arg(const onnx::ValueInfoProto& v) {
  NodeArg a;
  a.name = v.name();
  a.type = ort_type_string(v.type().tensor_type().elem_type());
  if (!v.type().tensor_type().has_shape()) {
    a.shape = py::none();
    return a;
  }
  py::list dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    if (d.has_dim_value()) {
      dims.append(py::int_(d.dim_value()));
    } else if (d.has_dim_param()) {
      dims.append(py::str(d.dim_param()));
    } else {
      dims.append(py::none());
    }
  }
  a.shape = dims;
  return a;
}

class InferenceSession {
 public:
  InferenceSession(const py::object& model, const std::string& verify, const py::object& cache,
                   uint32_t threads, const py::object& base_dir, const std::string& weights,
                   const py::object& memo_dir, uint64_t cache_max_bytes) {
    EngineOptions o;
    o.verify = verify_policy_arg(verify);
    o.weights = weight_mode_arg(weights);
    o.threads = threads;
    o.cache = cache_location_arg(cache);
    o.cache.max_bytes = cache_max_bytes;
    if (!memo_dir.is_none()) {
      o.memo_dir = py::str(py::module_::import("os").attr("fspath")(memo_dir));
    }
    ModelSource src = model_source(model);
    std::string base =
        base_dir.is_none() ? std::string(".") : py::str(base_dir).cast<std::string>();
    Result<std::unique_ptr<Engine>> e = invalid_argument("unreachable");
    {
      py::gil_scoped_release release;
      e = src.is_path ? Engine::open(src.path, o) : Engine::open_bytes(src.bytes, base, o);
    }
    engine_ = value_or_throw(std::move(e));
  }

  std::vector<NodeArg> get_inputs() const {
    std::vector<NodeArg> out;
    const auto& g = engine_->model().proto().graph();
    for (const auto& v : g.input()) {
      // Inputs with an initializer are listed too (they may be fed), as ORT does.
      out.push_back(node_arg(v));
    }
    return out;
  }

  std::vector<NodeArg> get_outputs() const {
    std::vector<NodeArg> out;
    for (const auto& v : engine_->model().proto().graph().output()) out.push_back(node_arg(v));
    return out;
  }

  py::list run(const py::object& output_names, const py::dict& feed, const py::object&) {
    std::vector<py::array> keep;  // the arrays read in place during the run
    std::map<std::string, runtime::Tensor> inputs = read_feeds(feed, keep);
    std::vector<size_t> picked = pick_outputs(output_names);
    Result<std::vector<runtime::HostTensor>> outs = internal_error("unreachable");
    {
      py::gil_scoped_release release;
      outs = engine_->run(inputs);
    }
    std::vector<runtime::HostTensor> tensors = value_or_throw(std::move(outs));
    py::list result;
    for (size_t i : picked) result.append(to_array(std::move(tensors[i]), i));
    return result;
  }

  py::list weights() const {
    py::list out;
    for (const auto& d : engine_->weights()) out.append(to_python(engine::weight_json(d)));
    return out;
  }

  py::dict timings() const {
    const EngineTimings t = engine_->timings();
    py::dict d;
    d["parse"] = t.parse;
    d["resolve"] = t.resolve;
    d["verify"] = t.verify;
    d["map"] = t.map;
    d["pack"] = t.pack;
    d["store"] = t.store;
    d["plan"] = t.plan;
    d["first_run"] = t.first_run;
    d["last_run"] = t.last_run;
    return d;
  }

 private:
  // Every fed value as a C-contiguous array of the declared type; errors name
  // the input and what the model expects.
  std::map<std::string, runtime::Tensor> read_feeds(const py::dict& feed,
                                                    std::vector<py::array>& keep) {
    std::map<std::string, runtime::Tensor> inputs;
    py::module_ np = py::module_::import("numpy");
    for (auto item : feed) {
      const std::string name = py::str(item.first);
      const runtime::GraphInput* gi = engine_->find_input(name);
      if (gi == nullptr) {
        std::string names;
        for (const auto& in : engine_->inputs()) names += (names.empty() ? "" : ", ") + in.name;
        throw py::value_error("input '" + name + "' is not a graph input (inputs: " + names + ")");
      }
      py::array a = np.attr("asarray")(item.second);
      const int32_t type = onnx_type_of(a.dtype());
      if (type != gi->dtype) {
        throw py::value_error(
            "input '" + name + "': dtype " + py::str(a.dtype()).cast<std::string>() +
            ", the model expects " + ort_type_string(gi->dtype) + " (numpy " +
            py::str(dtype_of(gi->dtype, "input '" + name + "'")).cast<std::string>() + ")");
      }
      runtime::Shape shape(a.shape(), a.shape() + a.ndim());
      check_shape(*gi, shape);
      if (!(a.flags() & py::array::c_style)) a = np.attr("ascontiguousarray")(a);
      inputs[name] = runtime::Tensor{type, shape, const_cast<void*>(a.data())};
      keep.push_back(a);
    }
    return inputs;
  }

  static void check_shape(const runtime::GraphInput& gi, const runtime::Shape& shape) {
    if (!gi.has_shape) return;
    bool fits = gi.dims.size() == shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = gi.dims[d] < 0 || gi.dims[d] == shape[d];
    if (fits) return;
    std::string want = "[";
    for (size_t d = 0; d < gi.dims.size(); ++d) {
      want += (d ? ", " : "") +
              (gi.dims[d] >= 0 ? std::to_string(gi.dims[d])
                               : (gi.dim_params[d].empty() ? std::string("?") : gi.dim_params[d]));
    }
    want += "]";
    throw py::value_error("input '" + gi.name + "': shape " + runtime::shape_string(shape) +
                          ", the model expects " + want + " (rank " +
                          std::to_string(gi.dims.size()) + ")");
  }

  std::vector<size_t> pick_outputs(const py::object& names) const {
    const auto& all = engine_->output_names();
    std::vector<size_t> picked;
    if (names.is_none()) {
      for (size_t i = 0; i < all.size(); ++i) picked.push_back(i);
      return picked;
    }
    for (auto n : names) {
      const std::string name = py::str(n);
      size_t i = 0;
      while (i < all.size() && all[i] != name) ++i;
      if (i == all.size()) throw py::value_error("output '" + name + "' is not a graph output");
      picked.push_back(i);
    }
    return picked;
  }

  // A numpy array over the tensor's own buffer; a capsule keeps it alive.
  py::array to_array(runtime::HostTensor t, size_t index) const {
    auto* owned = new runtime::HostTensor(std::move(t));
    py::capsule free_when_done(owned, [](void* p) { delete static_cast<runtime::HostTensor*>(p); });
    py::dtype dt = dtype_of(owned->dtype(), "output '" + engine_->output_names()[index] + "'");
    std::vector<py::ssize_t> shape(owned->shape().begin(), owned->shape().end());
    return py::array(dt, shape, {}, owned->data(), free_when_done);
  }

  std::unique_ptr<Engine> engine_;
};

}  // namespace

void bind_session(py::module_& m) {
  py::class_<NodeArg>(m, "NodeArg", "A graph input or output, as onnxruntime's NodeArg.")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("shape", &NodeArg::shape)
      .def_readonly("type", &NodeArg::type)
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + a.type +
               "', shape=" + py::repr(a.shape).cast<std::string>() + ")";
      });
  py::class_<InferenceSession>(m, "InferenceSession", R"doc(
A model loaded on onnx-prepack's CPU runtime, with packed weights resolved from
the model's compiled tensors or the cache store (docs/python.md).)doc")
      .def(py::init<const py::object&, const std::string&, const py::object&, uint32_t,
                    const py::object&, const std::string&, const py::object&, uint64_t>(),
           py::arg("path_or_bytes"),
           py::arg("verify") = std::string(verify_policy_name(kDefaultVerifyPolicy)),
           py::arg("cache") = py::none(), py::arg("threads") = kDefaultThreads,
           py::arg("base_dir") = py::none(),
           py::arg("weights") = std::string(weight_mode_name(kDefaultWeightMode)),
           py::arg("memo_dir") = py::none(), py::arg("cache_max_bytes") = kDefaultCacheMaxBytes)
      .def("get_inputs", &InferenceSession::get_inputs)
      .def("get_outputs", &InferenceSession::get_outputs)
      .def("run", &InferenceSession::run, py::arg("output_names"), py::arg("input_feed"),
           py::arg("run_options") = py::none())
      .def("weights", &InferenceSession::weights)
      .def("timings", &InferenceSession::timings);
}

}  // namespace onnx_prepack::python
