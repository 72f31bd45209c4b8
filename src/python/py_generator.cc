// The generator's binding: Python values become the engine's types here
// (token rows, engine::SearchOptions) and the engine decides the rest, the
// precedence of genai_config.json included (engine/genai_config.h). The GIL is
// released while a step runs; a mutex keeps one generator's calls one at a time.
#include "python/py_generator.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/genai_config.h"
#include "onnx_prepack/generator.hpp"
#include "python/py_convert.h"
#include "python/py_session.h"

namespace onnx_prepack::python {
namespace {

using Rows = std::vector<std::vector<int64_t>>;

std::string type_name(const py::handle& v) {
  return py::str(py::type::of(v).attr("__name__")).cast<std::string>();
}

// An int (or anything with __index__, such as numpy integers) in int64's range.
int64_t int_arg(const py::handle& v, const std::string& what) {
  if (py::isinstance<py::bool_>(v)) throw_invalid(what + " must be an integer, got bool");
  PyObject* index = PyNumber_Index(v.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    throw_invalid(what + " must be an integer, got " + type_name(v));
  }
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (overflow != 0) {
    throw_invalid(what + " " + py::str(v).cast<std::string>() + " does not fit in 64 bits");
  }
  return x;
}

double real_arg(const py::handle& v, const std::string& what) {
  if (py::isinstance<py::str>(v) || py::isinstance<py::bool_>(v) || v.is_none()) {
    throw_invalid(what + " must be a number, got " + type_name(v));
  }
  const double d = PyFloat_AsDouble(v.ptr());
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw_invalid(what + " must be a number, got " + type_name(v));
  }
  return d;
}

bool bool_arg(const py::handle& v, const std::string& what) {
  if (!py::isinstance<py::bool_>(v) && !py::isinstance<py::int_>(v)) {
    throw_invalid(what + " must be a bool, got " + type_name(v));
  }
  return v.cast<bool>();
}

// A list of ids (one row), a list of rows, or a 1-D / 2-D integer array.
Rows token_rows(const py::handle& tokens) {
  if (py::isinstance<py::array>(tokens)) {
    py::array a = py::reinterpret_borrow<py::array>(tokens);
    const char kind = a.dtype().kind();
    if (kind != 'i' && kind != 'u') {
      throw_invalid("tokens must be integer ids, got an array of " +
                    py::str(a.dtype()).cast<std::string>());
    }
    if (a.ndim() != 1 && a.ndim() != 2) {
      throw_invalid("tokens must be a 1-D (one sequence) or 2-D (batch, length) array, got " +
                    std::to_string(a.ndim()) + "-D");
    }
    auto ids = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!ids) throw_invalid("tokens: the array does not convert to int64");
    const size_t rows = a.ndim() == 1 ? 1 : size_t(a.shape(0));
    const size_t cols = a.ndim() == 1 ? size_t(a.shape(0)) : size_t(a.shape(1));
    Rows out(rows);
    const int64_t* p = ids.data();
    for (size_t r = 0; r < rows; ++r) out[r].assign(p + r * cols, p + (r + 1) * cols);
    return out;
  }
  if (!py::isinstance<py::list>(tokens) && !py::isinstance<py::tuple>(tokens)) {
    throw_invalid(
        "tokens must be a list of ids, a list of rows or a 1-D / 2-D integer numpy array, got " +
        type_name(tokens));
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(tokens);
  const bool nested =
      seq.size() > 0 && (py::isinstance<py::list>(seq[0]) || py::isinstance<py::tuple>(seq[0]) ||
                         py::isinstance<py::array>(seq[0]));
  if (!nested) {
    Rows out(1);
    for (size_t i = 0; i < seq.size(); ++i) {
      out[0].push_back(int_arg(seq[i], "tokens[" + std::to_string(i) + "]"));
    }
    return out;
  }
  Rows out;
  for (size_t r = 0; r < seq.size(); ++r) {
    py::object row = seq[r];
    if (py::isinstance<py::array>(row)) {
      py::array a = py::reinterpret_borrow<py::array>(row);
      if (a.ndim() != 1) throw_invalid("tokens[" + std::to_string(r) + "] must be 1-D");
      Rows one = token_rows(row);
      out.push_back(std::move(one[0]));
      continue;
    }
    if (!py::isinstance<py::list>(row) && !py::isinstance<py::tuple>(row)) {
      throw_invalid("tokens[" + std::to_string(r) + "] must be a row of ids, got " +
                    type_name(row));
    }
    std::vector<int64_t> ids;
    py::sequence rs = py::reinterpret_borrow<py::sequence>(row);
    for (size_t i = 0; i < rs.size(); ++i) {
      ids.push_back(int_arg(rs[i], "tokens[" + std::to_string(r) + "][" + std::to_string(i) + "]"));
    }
    out.push_back(std::move(ids));
  }
  return out;
}

// The caller's search options in the engine's names (genai.py maps
// onnxruntime-genai's names to these); an unknown key is an error.
engine::SearchOptions search_options(const py::dict& d) {
  engine::SearchOptions o;
  for (auto kv : d) {
    const std::string k = py::str(kv.first);
    const py::handle v = kv.second;
    if (v.is_none()) continue;  // not set
    if (k == "max_length") {
      o.max_length = int_arg(v, k);
    } else if (k == "max_new_tokens") {
      o.max_new_tokens = int_arg(v, k);
    } else if (k == "top_k") {
      o.top_k = int_arg(v, k);
    } else if (k == "pad_token_id") {
      o.pad_token_id = int_arg(v, k);
    } else if (k == "do_sample") {
      o.do_sample = bool_arg(v, k);
    } else if (k == "temperature") {
      o.temperature = real_arg(v, k);
    } else if (k == "top_p") {
      o.top_p = real_arg(v, k);
    } else if (k == "seed") {
      const int64_t s = int_arg(v, k);
      if (s < 0) throw_invalid("seed " + std::to_string(s) + " is negative");
      o.seed = uint64_t(s);
    } else if (k == "stop_ids") {
      o.stop_ids.emplace();
      if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        for (auto id : py::reinterpret_borrow<py::sequence>(v)) {
          o.stop_ids->push_back(int_arg(id, "stop_ids"));
        }
      } else {
        o.stop_ids->push_back(int_arg(v, "stop_ids"));
      }
    } else {
      throw_invalid("search option '" + k +
                    "' is not known (max_length, max_new_tokens, do_sample, temperature, top_k, "
                    "top_p, seed, stop_ids, pad_token_id)");
    }
  }
  return o;
}

// genai_model(path): the model file and genai_config.json a path names.
struct PyGenaiModel {
  engine::GenaiModel located;
  py::object config_path() const {
    return located.config ? py::object(py::str(located.config->path)) : py::none();
  }
  const engine::GenaiConfig* config() const { return located.config ? &*located.config : nullptr; }
};

const engine::GenaiConfig* config_of(const py::object& model) {
  if (model.is_none()) return nullptr;
  return model.cast<const PyGenaiModel&>().config();
}

GeneratorParams params_of(const py::object& model, const py::dict& options) {
  return engine::resolve_params(search_options(options), config_of(model));
}

py::array_t<int32_t> ids_array(const std::vector<int64_t>& ids) {
  py::array_t<int32_t> a(py::ssize_t(ids.size()));
  int32_t* d = a.mutable_data();
  for (size_t i = 0; i < ids.size(); ++i) d[i] = int32_t(ids[i]);
  return a;
}

py::dict stats_dict(const GenerationStats& s, const char* form) {
  py::dict d;
  d["first_token_ms"] = s.first_token_ms;
  d["decode_ms"] = s.decode_ms;
  d["decode_steps"] = s.decode_steps;
  d["decode_tokens_per_second"] = s.decode_tokens_per_second();
  d["prompt_tokens"] = s.prompt_tokens;
  d["new_tokens"] = s.new_tokens;
  d["plan_ms"] = s.plan_ms;
  d["form"] = form;
  return d;
}

py::dict params_dict(const GeneratorParams& p) {
  py::dict d;
  d["max_length"] = p.max_length;
  d["max_new_tokens"] = p.max_new_tokens;
  d["do_sample"] = p.do_sample;
  d["temperature"] = p.temperature;
  d["top_k"] = p.top_k;
  d["top_p"] = p.top_p;
  d["seed"] = p.seed;
  d["stop_ids"] = p.stop_ids;
  d["pad_token_id"] = p.pad_token_id;
  return d;
}

class PyGenerator {
 public:
  PyGenerator(py::object session, const py::object& model, const py::dict& options)
      : session_(std::move(session)) {
    Engine& engine = session_engine(session_);
    GeneratorParams p = params_of(model, options);
    Result<std::unique_ptr<Generator>> g = internal_error("unreachable");
    {
      py::gil_scoped_release release;
      g = Generator::create(engine, std::move(p));
    }
    gen_ = value_or_throw(std::move(g));
  }

  void append_tokens(const py::object& tokens) {
    const Rows rows = token_rows(tokens);
    Status st;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      st = gen_->append_tokens(rows);
    }
    if (!st.ok()) throw_status(st);
  }

  void generate_next_token() {
    Status st;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      st = gen_->generate_next_token();
    }
    if (!st.ok()) throw_status(st);
  }

  // Getters copy under the lock with the GIL released (a step may hold the lock).
  template <typename F>
  auto read(F&& f) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    return f(*gen_);
  }

  bool is_done() {
    return read([](const Generator& g) { return g.is_done(); });
  }
  py::array_t<int32_t> next_tokens() {
    return ids_array(read([](const Generator& g) { return g.next_tokens(); }));
  }
  py::array_t<int32_t> sequence(int64_t index) {
    const size_t batch = read([](const Generator& g) { return g.batch_size(); });
    if (index < 0 || uint64_t(index) >= batch) {
      throw_status(out_of_range("get_sequence: index " + std::to_string(index) +
                                " is past the batch of " + std::to_string(batch) + " sequences"));
    }
    return ids_array(read([&](const Generator& g) { return g.sequence(size_t(index)); }));
  }
  py::array_t<float> logits() {
    size_t batch = 0;
    int64_t vocab = 0;
    std::vector<float> l = read([&](const Generator& g) {
      batch = g.batch_size();
      vocab = g.vocab_size();
      return g.last_logits();
    });
    if (batch == 0 || vocab <= 0 || l.size() != batch * size_t(vocab)) {
      throw_invalid("get_logits: no logits yet (append_tokens runs the first step)");
    }
    py::array_t<float> a({py::ssize_t(batch), py::ssize_t(vocab)});
    std::memcpy(a.mutable_data(), l.data(), l.size() * sizeof(float));
    return a;
  }
  py::dict stats() {
    GenerationStats s = read([](const Generator& g) { return g.stats(); });
    return stats_dict(s, gen_->form());
  }
  py::dict params() {
    return params_dict(read([](const Generator& g) { return g.params(); }));
  }
  size_t batch_size() {
    return read([](const Generator& g) { return g.batch_size(); });
  }
  int64_t vocab_size() {
    return read([](const Generator& g) { return g.vocab_size(); });
  }
  std::string form() const { return gen_->form(); }

 private:
  py::object session_;  // keeps the engine alive
  std::unique_ptr<Generator> gen_;
  std::mutex mu_;
};

py::dict py_generate(const py::object& session, const py::object& model, const py::object& prompts,
                     const py::dict& options) {
  Engine& engine = session_engine(session);
  const GeneratorParams p = params_of(model, options);
  const Rows rows = token_rows(prompts);
  Result<GenerateResult> r = internal_error("unreachable");
  {
    py::gil_scoped_release release;
    r = generate(engine, rows, p);
  }
  GenerateResult g = value_or_throw(std::move(r));
  py::dict d;
  d["sequences"] = g.sequences;
  d["new_tokens"] = g.new_tokens;
  d["stats"] = stats_dict(g.stats, "");
  return d;
}

}  // namespace

void bind_generator(py::module_& m) {
  py::class_<PyGenaiModel>(m, "GenaiModel",
                           "The model file and genai_config.json a path names (internal).")
      .def_property_readonly("model_path",
                             [](const PyGenaiModel& g) { return g.located.model_path; })
      .def_property_readonly("config_path", &PyGenaiModel::config_path)
      .def_property_readonly("eos_token_id",
                             [](const PyGenaiModel& g) {
                               return g.config() ? g.config()->eos_token_ids
                                                 : std::vector<int64_t>();
                             })
      .def_property_readonly("pad_token_id",
                             [](const PyGenaiModel& g) -> py::object {
                               if (g.config() && g.config()->pad_token_id)
                                 return py::int_(*g.config()->pad_token_id);
                               return py::none();
                             })
      .def_property_readonly("max_length", [](const PyGenaiModel& g) -> py::object {
        if (g.config() && g.config()->max_length) return py::int_(*g.config()->max_length);
        return py::none();
      });
  m.def(
      "genai_model",
      [](const py::object& path) {
        const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
        Result<engine::GenaiModel> r = internal_error("unreachable");
        {
          py::gil_scoped_release release;
          r = engine::locate_genai_model(p);
        }
        return PyGenaiModel{value_or_throw(std::move(r))};
      },
      py::arg("path"),
      "The model file a path names (a file, or a folder with genai_config.json or model.onnx) and "
      "its genai_config.json.");
  py::class_<PyGenerator>(m, "Generator", R"doc(
The engine's token generator on one Session (internal: use onnx_prepack.genai).)doc")
      .def(py::init<py::object, const py::object&, const py::dict&>(), py::arg("session"),
           py::arg("model"), py::arg("options"))
      .def("append_tokens", &PyGenerator::append_tokens, py::arg("tokens"))
      .def("generate_next_token", &PyGenerator::generate_next_token)
      .def("is_done", &PyGenerator::is_done)
      .def("get_next_tokens", &PyGenerator::next_tokens)
      .def("get_sequence", &PyGenerator::sequence, py::arg("index"))
      .def("get_logits", &PyGenerator::logits)
      .def("stats", &PyGenerator::stats)
      .def("params", &PyGenerator::params)
      .def_property_readonly("batch_size", &PyGenerator::batch_size)
      .def_property_readonly("vocab_size", &PyGenerator::vocab_size)
      .def_property_readonly("form", &PyGenerator::form);
  m.def("generate", &py_generate, py::arg("session"), py::arg("model"), py::arg("prompts"),
        py::arg("options"),
        "The whole loop in one call: {'sequences', 'new_tokens', 'stats'} (internal).");
}

}  // namespace onnx_prepack::python
