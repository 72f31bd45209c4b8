// The engine's Generator for Python: GenModel owns one Engine, Generator runs
// the KV-cache loop on it. A thin adapter: argument shapes and the parameters'
// names live in src/python/onnx_prepack/genai.py; every rule (empty prompt, id
// range, parameter ranges) is the engine's, raised as the module's exception
// classes. The GIL is released while the engine plans and runs.
#include "python/py_generator.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/genai_config.h"
#include "onnx_prepack/engine.hpp"
#include "onnx_prepack/generator.hpp"
#include "python/py_convert.h"

namespace onnx_prepack::python {
namespace {

// One engine that generators share. A generator uses its engine alone while it
// steps, so steps of generators over one model take turns on `mutex` (taken
// with the GIL released: a step holding it never waits for the GIL).
class GenModel {
 public:
  GenModel(const std::string& path, const std::string& verify, const py::object& cache,
           uint32_t threads, const std::string& weights, const py::object& memo_dir,
           const std::string& qdq) {
    EngineOptions o;
    o.verify = verify_policy_arg(verify);
    o.weights = weight_mode_arg(weights);
    o.qdq = qdq_mode_arg(qdq);
    o.threads = threads;
    o.cache = cache_location_arg(cache);
    if (!memo_dir.is_none()) {
      o.memo_dir = py::str(py::module_::import("os").attr("fspath")(memo_dir));
    }
    Result<std::unique_ptr<Engine>> e = internal_error("unreachable");
    {
      py::gil_scoped_release release;
      e = Engine::open(path, o);
    }
    engine_ = value_or_throw(std::move(e));
  }

  Engine& engine() { return *engine_; }
  std::mutex& mutex() { return mutex_; }
  uint32_t threads() const { return engine_->threads(); }

 private:
  std::unique_ptr<Engine> engine_;
  std::mutex mutex_;
};

py::array_t<int64_t> to_array(const std::vector<int64_t>& ids) {
  py::array_t<int64_t> a(py::ssize_t(ids.size()));
  std::copy(ids.begin(), ids.end(), a.mutable_data());
  return a;
}

py::dict stats_dict(const GenerationStats& s) {
  py::dict d;
  d["first_token_ms"] = s.first_token_ms;
  d["decode_ms"] = s.decode_ms;
  d["decode_steps"] = s.decode_steps;
  d["decode_tokens_per_second"] = s.decode_tokens_per_second();
  d["prompt_tokens"] = s.prompt_tokens;
  d["new_tokens"] = s.new_tokens;
  d["plan_ms"] = s.plan_ms;
  return d;
}

class PyGenerator {
 public:
  // `model` is held so that its engine outlives the generator.
  PyGenerator(py::object model, const GeneratorParams& params) : model_(std::move(model)) {
    GenModel& m = model_.cast<GenModel&>();
    Result<std::unique_ptr<Generator>> g = internal_error("unreachable");
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(m.mutex());
      g = Generator::create(m.engine(), params);
    }
    gen_ = value_or_throw(std::move(g));
  }

  void append_tokens(const std::vector<std::vector<int64_t>>& rows) {
    step([&] { return gen_->append_tokens(rows); });
  }
  void generate_next_token() {
    step([&] { return gen_->generate_next_token(); });
  }
  bool is_done() const { return gen_->is_done(); }
  py::array_t<int64_t> next_tokens() const { return to_array(gen_->next_tokens()); }

  py::array_t<int64_t> sequence(int64_t index) const {
    const size_t n = gen_->batch_size();
    if (index < 0 || uint64_t(index) >= n) {
      throw_invalid("get_sequence: index " + std::to_string(index) + " is outside the batch of " +
                    std::to_string(n) + " sequences");
    }
    return to_array(gen_->sequence(size_t(index)));
  }

  // [batch, vocab] float32: the last step's logits (a copy).
  py::array_t<float> logits() const {
    const std::vector<float>& l = gen_->last_logits();
    const auto vocab = py::ssize_t(gen_->vocab_size());
    const py::ssize_t rows = vocab > 0 ? py::ssize_t(l.size()) / vocab : 0;
    py::array_t<float> a({rows, vocab});
    std::copy(l.begin(), l.begin() + rows * vocab, a.mutable_data());
    return a;
  }

  size_t batch_size() const { return gen_->batch_size(); }
  int64_t vocab_size() const { return gen_->vocab_size(); }
  std::string form() const { return gen_->form(); }
  py::dict stats() const { return stats_dict(gen_->stats()); }

 private:
  template <typename F>
  void step(F&& f) {
    GenModel& m = model_.cast<GenModel&>();
    Status st;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(m.mutex());
      st = f();
    }
    if (!st.ok()) throw_status(st);
  }

  py::object model_;
  std::unique_ptr<Generator> gen_;
};

// The whole loop: {"sequences", "new_tokens": lists of int lists, "stats": dict}.
py::dict py_generate(GenModel& model, const std::vector<std::vector<int64_t>>& prompts,
                     const GeneratorParams& params) {
  Result<GenerateResult> r = internal_error("unreachable");
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(model.mutex());
    r = generate(model.engine(), prompts, params);
  }
  GenerateResult g = value_or_throw(std::move(r));
  py::dict d;
  d["sequences"] = g.sequences;
  d["new_tokens"] = g.new_tokens;
  d["stats"] = stats_dict(g.stats);
  return d;
}

// genai_config.json as read by the engine (engine/genai_config.h), held by
// the package's Model; resolve_params applies its defaults under the caller's
// options with the engine's precedence (the CLI's too).
struct PyGenaiConfig {
  engine::GenaiConfig config;
};

py::dict py_genai_model(const std::string& path) {
  Result<engine::GenaiModel> r = internal_error("unreachable");
  {
    py::gil_scoped_release release;
    r = engine::locate_genai_model(path);
  }
  engine::GenaiModel g = value_or_throw(std::move(r));
  py::dict d;
  d["model_path"] = g.model_path;
  d["config_path"] = g.config ? py::object(py::str(g.config->path)) : py::none();
  d["config"] = g.config ? py::cast(PyGenaiConfig{std::move(*g.config)}) : py::none();
  return d;
}

// `given`: the engine's field names the caller set (genai.py converted them).
GeneratorParams py_resolve_params(const py::object& config, const py::dict& given) {
  engine::SearchOptions o;
  for (auto kv : given) {
    const std::string k = py::str(kv.first);
    const py::handle v = kv.second;
    if (k == "max_length") {
      o.max_length = v.cast<int64_t>();
    } else if (k == "max_new_tokens") {
      o.max_new_tokens = v.cast<int64_t>();
    } else if (k == "top_k") {
      o.top_k = v.cast<int64_t>();
    } else if (k == "pad_token_id") {
      o.pad_token_id = v.cast<int64_t>();
    } else if (k == "do_sample") {
      o.do_sample = v.cast<bool>();
    } else if (k == "temperature") {
      o.temperature = v.cast<double>();
    } else if (k == "top_p") {
      o.top_p = v.cast<double>();
    } else if (k == "seed") {
      o.seed = v.cast<uint64_t>();
    } else if (k == "stop_ids") {
      o.stop_ids = v.cast<std::vector<int64_t>>();
    } else {
      throw_invalid("resolve_params: '" + k + "' is no GeneratorParams field");
    }
  }
  const engine::GenaiConfig* c = config.is_none() ? nullptr : &config.cast<PyGenaiConfig&>().config;
  return engine::resolve_params(o, c);
}

}  // namespace

void bind_generator(py::module_& m) {
  py::class_<PyGenaiConfig>(m, "GenaiConfig", "A genai_config.json the engine read (internal).")
      .def_property_readonly("path", [](const PyGenaiConfig& c) { return c.config.path; });
  m.def("genai_model", &py_genai_model, py::arg("path"),
        "{'model_path', 'config_path', 'config'}: the model file a path names (a file, or a "
        "folder with genai_config.json or model.onnx) and its genai_config.json.");
  m.def("resolve_params", &py_resolve_params, py::arg("config"), py::arg("given"),
        "GeneratorParams: the fields in `given` over the config's defaults over the engine's.");
  py::class_<GenModel>(m, "GenModel", R"doc(
One engine over a decoder model, shared by the generators made on it. Internal:
use onnx_prepack.genai.Model (docs/python.md, "Generation").)doc")
      .def(py::init<const std::string&, const std::string&, const py::object&, uint32_t,
                    const std::string&, const py::object&, const std::string&>(),
           py::arg("path"),
           py::arg("verify") = std::string(verify_policy_name(kDefaultVerifyPolicy)),
           py::arg("cache") = py::none(), py::arg("threads") = kDefaultThreads,
           py::arg("weights") = std::string(weight_mode_name(kDefaultWeightMode)),
           py::arg("memo_dir") = py::none(),
           py::arg("qdq") = std::string(qdq_mode_name(kDefaultQdqMode)))
      .def_property_readonly("threads", &GenModel::threads, "The engine's thread count.");
  py::class_<GeneratorParams>(m, "GeneratorParams",
                              "The engine's GeneratorParams (docs/llm.md, \"Parameters\").")
      .def(py::init<>())
      .def_readwrite("max_length", &GeneratorParams::max_length)
      .def_readwrite("max_new_tokens", &GeneratorParams::max_new_tokens)
      .def_readwrite("do_sample", &GeneratorParams::do_sample)
      .def_readwrite("temperature", &GeneratorParams::temperature)
      .def_readwrite("top_k", &GeneratorParams::top_k)
      .def_readwrite("top_p", &GeneratorParams::top_p)
      .def_readwrite("seed", &GeneratorParams::seed)
      .def_readwrite("stop_ids", &GeneratorParams::stop_ids)
      .def_readwrite("pad_token_id", &GeneratorParams::pad_token_id);
  py::class_<PyGenerator>(m, "Generator",
                          "The engine's Generator. Internal: use onnx_prepack.genai.Generator.")
      .def(py::init<py::object, const GeneratorParams&>(), py::arg("model"), py::arg("params"))
      .def("append_tokens", &PyGenerator::append_tokens, py::arg("rows"),
           "The prompt (one row per sequence), run as the prompt step.")
      .def("generate_next_token", &PyGenerator::generate_next_token, "One decode step.")
      .def("is_done", &PyGenerator::is_done)
      .def("get_next_tokens", &PyGenerator::next_tokens)
      .def("get_sequence", &PyGenerator::sequence, py::arg("index"))
      .def("get_logits", &PyGenerator::logits)
      .def_property_readonly("batch_size", &PyGenerator::batch_size)
      .def_property_readonly("vocab_size", &PyGenerator::vocab_size)
      .def_property_readonly("form", &PyGenerator::form)
      .def("stats", &PyGenerator::stats);
  m.def("generate", &py_generate, py::arg("model"), py::arg("prompts"), py::arg("params"),
        "append_tokens(prompts) then generate_next_token() until done.");
}

}  // namespace onnx_prepack::python
