// onnx_prepack._onnx_prepack.Session: one engine with onnxruntime's conventions
// (the package's InferenceSession, src/python/onnx_prepack/__init__.py, keeps
// one or more of them). Inputs are read in place when C-contiguous and of the
// declared type; outputs are numpy arrays over the engine's output buffers (no
// copy). The GIL is released while the engine loads, prepares and runs; the
// engine serializes runs on one Session.
#include "python/py_session.h"

#include <pybind11/stl.h>

#include <atomic>
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

// RunOptions.terminate's storage: an atomic the engine polls while another
// Python thread (holding the GIL, the run having released it) sets it.
struct RunFlag {
  std::atomic<bool> terminate{false};
};

class EngineSession {
 public:
  EngineSession(const py::object& model, const std::string& verify, const py::object& cache,
                uint32_t threads, const py::object& base_dir, const std::string& weights,
                const py::object& memo_dir, uint64_t cache_max_bytes, const std::string& qdq,
                const std::string& float16_intermediates) {
    EngineOptions o;
    if (float16_intermediates != "float16" && float16_intermediates != "float") {
      throw_status(invalid_argument("float16_intermediates must be float16 or float, got '" +
                                    float16_intermediates + "'"));
    }
    o.float16_float_chains = float16_intermediates == "float";
    o.verify = verify_policy_arg(verify);
    o.weights = weight_mode_arg(weights);
    o.qdq = qdq_mode_arg(qdq);
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

  explicit EngineSession(std::unique_ptr<Engine> engine) : engine_(std::move(engine)) {}

  // Another engine over the same parsed model with the same options (its own
  // plan, arena, thread pool and prepared weights): what lets the package run
  // one session from several threads at once.
  std::unique_ptr<EngineSession> fork() const {
    Result<std::unique_ptr<Engine>> e = invalid_argument("unreachable");
    {
      py::gil_scoped_release release;
      e = Engine::open_model(engine_->shared_model(), engine_->options());
    }
    return std::make_unique<EngineSession>(value_or_throw(std::move(e)));
  }

  // Plans now for the declared input shapes (a symbolic dimension as 1), so
  // the weights are resolved, mapped and packed before the first run; a run of
  // other shapes plans again and reuses the prepared packs. Returns "" when
  // planned, else why not (an input of unknown rank or string type, or the plan's
  // error: the first run then plans and reports it).
  std::string prepare() {
    std::vector<runtime::HostTensor> buffers;
    std::map<std::string, runtime::Tensor> inputs;
    for (const runtime::GraphInput& gi : engine_->inputs()) {
      if (gi.has_initializer) continue;
      if (!gi.has_shape) return "input '" + gi.name + "' has no declared shape";
      if (gi.dtype == runtime::kString || gi.dtype == runtime::kUndefined) {
        return "input '" + gi.name + "' has no fixed-size element type";
      }
      runtime::Shape shape;
      for (int64_t d : gi.dims) shape.push_back(d < 0 ? 1 : d);
      Result<runtime::HostTensor> t =
          runtime::HostTensor::try_allocate(gi.dtype, shape, "input '" + gi.name + "'");
      if (!t.ok()) return t.status().message();
      buffers.push_back(std::move(*t));
      inputs[gi.name] = buffers.back().view();
    }
    Status st;
    {
      py::gil_scoped_release release;
      st = engine_->plan(inputs);
    }
    return st.ok() ? std::string() : st.message();
  }

  // The graph inputs a run must or may feed, without initializers (as ORT).
  std::vector<NodeArg> get_inputs() const { return graph_inputs(false); }
  // Graph inputs that have an initializer: a feed overrides the default.
  std::vector<NodeArg> get_overridable_initializers() const { return graph_inputs(true); }

  std::vector<NodeArg> get_outputs() const {
    std::vector<NodeArg> out;
    for (const auto& v : engine_->model().proto().graph().output()) out.push_back(node_arg(v));
    return out;
  }

  // onnxruntime's ModelMetadata fields, from the ModelProto.
  py::dict modelmeta() const {
    const auto& p = engine_->model().proto();
    py::dict d;
    d["producer_name"] = p.producer_name();
    d["producer_version"] = p.producer_version();
    d["graph_name"] = p.graph().name();
    d["graph_description"] = p.graph().doc_string();
    d["domain"] = p.domain();
    d["description"] = p.doc_string();
    d["version"] = p.model_version();
    py::dict custom;
    for (const auto& kv : p.metadata_props()) custom[py::str(kv.key())] = kv.value();
    d["custom_metadata_map"] = custom;
    return d;
  }

  py::dict engine_options() const {
    const EngineOptions& o = engine_->options();
    py::dict d;
    d["verify"] = std::string(verify_policy_name(o.verify));
    d["weights"] = std::string(weight_mode_name(o.weights));
    d["qdq"] = std::string(qdq_mode_name(o.qdq));
    d["cache"] = std::string(cache_location_name(o.cache));
    d["cache_max_bytes"] = o.cache.max_bytes;
    d["memo_dir"] = o.memo_dir;
    d["threads"] = engine_->threads();
    d["float16_intermediates"] = std::string(o.float16_float_chains ? "float" : "float16");
    return d;
  }

  // None or an empty list: every output, in graph order (as onnxruntime).
  // `deadline_ms` 0: none; `flag` (may be None) stops the run once set.
  py::list run(const py::object& output_names, const py::dict& feed, uint64_t deadline_ms,
               const std::shared_ptr<RunFlag>& flag) {
    std::vector<py::array> keep;  // the arrays read in place during the run
    std::map<std::string, runtime::Tensor> inputs = read_feeds(feed, keep);
    std::vector<size_t> picked = pick_outputs(output_names);
    RunOptions ro;
    ro.deadline_ms = deadline_ms;
    if (flag) ro.terminate = &flag->terminate;  // `flag` outlives the call: the caller holds it
    Result<std::vector<runtime::HostTensor>> outs = internal_error("unreachable");
    {
      py::gil_scoped_release release;
      outs = engine_->run(inputs, ro);
    }
    std::vector<runtime::HostTensor> tensors = value_or_throw(std::move(outs));
    py::list result;
    for (size_t i : picked) result.append(to_array(std::move(tensors[i]), i));
    return result;
  }

  const std::vector<std::string>& output_names() const { return engine_->output_names(); }

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
        throw_invalid("input '" + name + "' is not a graph input (inputs: " + names + ")");
      }
      py::array a = np.attr("asarray")(item.second);
      int32_t type = onnx_type_of(a.dtype());
      // bfloat16: ml_dtypes.bfloat16, or its raw bits as uint16.
      if (gi->dtype == runtime::kBfloat16 && type == runtime::kUint16) type = runtime::kBfloat16;
      if (type != gi->dtype) {
        throw_invalid("input '" + name + "': dtype " + py::str(a.dtype()).cast<std::string>() +
                      ", the model expects " + ort_type_string(gi->dtype) + " (numpy " +
                      py::str(dtype_of(gi->dtype, "input '" + name + "'")).cast<std::string>() +
                      ")");
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
    throw_invalid("input '" + gi.name + "': shape " + runtime::shape_string(shape) +
                  ", the model expects " + want + " (rank " + std::to_string(gi.dims.size()) + ")");
  }

  std::vector<size_t> pick_outputs(const py::object& names) const {
    const auto& all = engine_->output_names();
    std::vector<size_t> picked;
    if (names.is_none() || py::len(names) == 0) {
      for (size_t i = 0; i < all.size(); ++i) picked.push_back(i);
      return picked;
    }
    for (auto n : names) {
      const std::string name = py::str(n);
      size_t i = 0;
      while (i < all.size() && all[i] != name) ++i;
      if (i == all.size()) throw_invalid("output '" + name + "' is not a graph output");
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

  std::vector<NodeArg> graph_inputs(bool with_initializer) const {
    std::vector<NodeArg> out;
    for (const auto& v : engine_->model().proto().graph().input()) {
      const runtime::GraphInput* gi = engine_->find_input(v.name());
      const bool has_init = gi != nullptr && gi->has_initializer;
      if (has_init == with_initializer) out.push_back(node_arg(v));
    }
    return out;
  }

  std::unique_ptr<Engine> engine_;
};

}  // namespace

void bind_session(py::module_& m) {
  py::class_<NodeArg>(m, "NodeArg", "A graph input or output, as onnxruntime's NodeArg.")
      .def_readonly("name", &NodeArg::name, "The value's name.")
      .def_readonly("shape", &NodeArg::shape,
                    "Dims: ints, dim_param strings, None; None if unknown rank.")
      .def_readonly("type", &NodeArg::type, "onnxruntime's type string, e.g. 'tensor(float)'.")
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name='" + a.name + "', type='" + a.type +
               "', shape=" + py::repr(a.shape).cast<std::string>() + ")";
      });
  py::class_<RunFlag, std::shared_ptr<RunFlag>>(
      m, "RunFlag", "RunOptions.terminate: settable from any thread while a run reads it.")
      .def(py::init<>())
      .def_property(
          "terminate", [](const RunFlag& f) { return f.terminate.load(); },
          [](RunFlag& f, bool v) { f.terminate.store(v); });
  py::class_<EngineSession>(m, "Session", R"doc(
One engine: a model loaded on onnx-prepack's CPU runtime, with packed weights
resolved from the model's compiled tensors or the cache store. Internal: use
onnx_prepack.InferenceSession (docs/python.md).)doc")
      .def(py::init<const py::object&, const std::string&, const py::object&, uint32_t,
                    const py::object&, const std::string&, const py::object&, uint64_t,
                    const std::string&, const std::string&>(),
           py::arg("path_or_bytes"),
           py::arg("verify") = std::string(verify_policy_name(kDefaultVerifyPolicy)),
           py::arg("cache") = py::none(), py::arg("threads") = kDefaultThreads,
           py::arg("base_dir") = py::none(),
           py::arg("weights") = std::string(weight_mode_name(kDefaultWeightMode)),
           py::arg("memo_dir") = py::none(), py::arg("cache_max_bytes") = kDefaultCacheMaxBytes,
           py::arg("qdq") = std::string(qdq_mode_name(kDefaultQdqMode)),
           py::arg("float16_intermediates") = std::string("float16"))
      .def("fork", &EngineSession::fork,
           "Another engine over the same parsed model and options (own plan and arena).")
      .def("prepare", &EngineSession::prepare,
           "Plans for the declared input shapes now; returns '' or why it could not.")
      .def("get_inputs", &EngineSession::get_inputs, "Graph inputs without an initializer.")
      .def("get_overridable_initializers", &EngineSession::get_overridable_initializers,
           "Graph inputs that have an initializer.")
      .def("get_outputs", &EngineSession::get_outputs, "Graph outputs.")
      .def("modelmeta", &EngineSession::modelmeta, "ModelMetadata fields as a dict.")
      .def("engine_options", &EngineSession::engine_options, "The engine's options as a dict.")
      .def_property_readonly("output_names", &EngineSession::output_names)
      .def("run", &EngineSession::run, py::arg("output_names"), py::arg("input_feed"),
           py::arg("deadline_ms") = uint64_t(0), py::arg("flag") = nullptr,
           "Runs; None or [] gives every output. deadline_ms 0: none; flag: a RunFlag.")
      .def("weights", &EngineSession::weights, "Per-weight decisions so far.")
      .def("timings", &EngineSession::timings, "Phase timings in ms.");
}

}  // namespace onnx_prepack::python
