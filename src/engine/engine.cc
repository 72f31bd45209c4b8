#include "onnx_prepack/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "device/device_match.h"
#include "engine/engine_options.h"
#include "format/model.h"
#include "resolve/cache_store.h"
#include "resolve/resolver.h"
#include "runtime/prepared_weights.h"
#include "runtime/run_limits.h"
#include "runtime/session.h"

namespace onnx_prepack {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

using Feeds = std::map<std::string, runtime::Session::Feed>;

Feeds feeds_of(const std::map<std::string, runtime::Tensor>& inputs) {
  Feeds feeds;
  for (const auto& [name, t] : inputs) feeds[name] = {t.dtype, t.shape, nullptr};
  return feeds;
}

bool same_types_and_shapes(const Feeds& a, const Feeds& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.dtype != ib->second.dtype ||
        ia->second.shape != ib->second.shape) {
      return false;
    }
  }
  return true;
}

}  // namespace

// Members in the order they are built; destroyed in reverse, users first.
struct Engine::State {
  std::shared_ptr<const format::Model> model;
  EngineOptions options;
  std::unique_ptr<base::ThreadPool> own_pool;
  base::ThreadPool* pool = nullptr;
  std::unique_ptr<resolve::CacheStore> store;
  std::string store_error;  // the store could not be opened: the engine runs without it
  std::unique_ptr<resolve::Resolver> resolver;
  // Writes the memo records of the load once the first run is done (joined
  // before the resolver goes: declared after it).
  std::jthread memo_flush;
  std::unique_ptr<runtime::ResolvedWeights> prepared;
  std::unique_ptr<runtime::Session> session;

  mutable std::mutex mu;        // plan and run share the session's arena
  Feeds planned;                // types and shapes of the plan (values not kept)
  std::set<std::string> bound;  // the plan's bound inputs and outputs (run_bound)
  bool has_plan = false;
  bool pinned = false;  // the plan holds fed values: plan again every run
  bool first_run_pending = false;
  uint64_t populated = 0;
  EngineTimings timings;

  Status plan_locked(const std::map<std::string, runtime::Tensor>& inputs,
                     const runtime::RunLimits* limits = nullptr);
  // Plans again unless the plan is for these inputs' types and shapes and
  // these bound values (plan_locked with `wanted` bound).
  Status ensure_plan_locked(const std::map<std::string, runtime::Tensor>& inputs,
                            const std::set<std::string>& wanted, const runtime::RunLimits* limits);
  void note_run(double run_ms);
};

Engine::Engine(std::unique_ptr<State> state) : s_(std::move(state)) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::open(const std::string& path, EngineOptions options) {
  OP_RETURN_IF_ERROR(engine::validate(options));
  const auto t0 = Clock::now();
  OP_ASSIGN_OR_RETURN(std::unique_ptr<format::Model> model, format::Model::load(path));
  const double parse_ms = ms_between(t0, Clock::now());
  auto e = open_model(std::shared_ptr<const format::Model>(std::move(model)), std::move(options));
  if (e.ok()) (*e)->s_->timings.parse = parse_ms;
  return e;
}

Result<std::unique_ptr<Engine>> Engine::open_bytes(std::string_view bytes, std::string base_dir,
                                                   EngineOptions options) {
  OP_RETURN_IF_ERROR(engine::validate(options));
  const auto t0 = Clock::now();
  OP_ASSIGN_OR_RETURN(
      std::unique_ptr<format::Model> model,
      format::Model::parse(
          std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
          std::move(base_dir)));
  const double parse_ms = ms_between(t0, Clock::now());
  auto e = open_model(std::shared_ptr<const format::Model>(std::move(model)), std::move(options));
  if (e.ok()) (*e)->s_->timings.parse = parse_ms;
  return e;
}

Result<std::unique_ptr<Engine>> Engine::open_model(std::shared_ptr<const format::Model> model,
                                                   EngineOptions options) {
  OP_RETURN_IF_ERROR(engine::validate(options));
  if (model == nullptr) return invalid_argument("engine: model is null");
  auto s = std::make_unique<State>();
  s->model = std::move(model);
  s->options = std::move(options);
  s->pool = engine::pool_for(s->options.threads, s->own_pool);
  runtime::SessionOptions so;
  so.pool = s->pool;
  so.qdq = s->options.qdq;
  so.float16_float_chains = s->options.float16_float_chains;
  if (s->options.weights == WeightMode::kPacked) {
    // A store that cannot be opened (read-only filesystem, a file in its place,
    // no inodes) is never fatal: the run goes on without it and reports why.
    auto store = engine::open_cache_store(s->options);
    if (store.ok()) {
      s->store = std::move(*store);
    } else {
      s->store_error = store.status().message();
    }
    resolve::ResolverOptions ro;
    ro.verify = s->options.verify;
    ro.memo_dir = s->options.memo_dir;
    ro.cache = s->store.get();
    ro.pool = s->pool;
    s->resolver =
        std::make_unique<resolve::Resolver>(*s->model, device::HostDescription::detect(), ro);
    s->prepared = std::make_unique<runtime::ResolvedWeights>(s->resolver.get(),
                                                             device::host_isa_level(), s->pool);
    so.weights = s->prepared.get();
  }
  OP_ASSIGN_OR_RETURN(s->session, runtime::Session::create(s->model, so));
  return std::unique_ptr<Engine>(new Engine(std::move(s)));
}

const format::Model& Engine::model() const { return *s_->model; }
std::shared_ptr<const format::Model> Engine::shared_model() const { return s_->model; }
const EngineOptions& Engine::options() const { return s_->options; }
size_t Engine::threads() const { return s_->pool->size(); }

const std::vector<runtime::GraphInput>& Engine::inputs() const { return s_->session->inputs(); }
const std::vector<std::string>& Engine::output_names() const { return s_->session->output_names(); }

const runtime::GraphInput* Engine::find_input(std::string_view name) const {
  for (const auto& in : inputs()) {
    if (in.name == name) return &in;
  }
  return nullptr;
}

Status Engine::plan(const std::map<std::string, runtime::Tensor>& inputs) {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (!s_->bound.empty()) {
    s_->session->set_bound_values({});
    s_->bound.clear();
  }
  return s_->plan_locked(inputs);
}

Status Engine::State::ensure_plan_locked(const std::map<std::string, runtime::Tensor>& inputs,
                                         const std::set<std::string>& wanted,
                                         const runtime::RunLimits* limits) {
  if (wanted != bound) {
    session->set_bound_values(wanted);
    bound = wanted;
    has_plan = false;
  }
  if (!has_plan || pinned || !same_types_and_shapes(feeds_of(inputs), planned))
    return plan_locked(inputs, limits);
  return ok_status();
}

Status Engine::State::plan_locked(const std::map<std::string, runtime::Tensor>& inputs,
                                  const runtime::RunLimits* limits) {
  const runtime::PreparedTotals before = prepared ? prepared->totals() : runtime::PreparedTotals();
  const size_t decisions_before = prepared ? prepared->decisions().size() : 0;
  has_plan = false;
  pinned = false;
  Feeds feeds = feeds_of(inputs);
  const auto t0 = Clock::now();
  OP_ASSIGN_OR_RETURN(runtime::PlanOutcome outcome, session->plan(feeds, limits));
  if (outcome == runtime::PlanOutcome::kNeedsInputValues) {
    for (auto& [name, f] : feeds) f.value = &inputs.at(name);  // shape inputs fed as data
    pinned = true;
    OP_ASSIGN_OR_RETURN(outcome, session->plan(feeds, limits));
    if (outcome != runtime::PlanOutcome::kPlanned) {
      return internal_error("plan: a value is still unknown with every fed input pinned");
    }
  }
  const auto t1 = Clock::now();
  if (prepared) populated = prepared->populate_hits(pool);
  const auto t2 = Clock::now();
  for (auto& [name, f] : feeds) f.value = nullptr;  // the caller's tensors die after this call
  planned = std::move(feeds);
  has_plan = true;
  first_run_pending = true;

  const runtime::PreparedTotals after = prepared ? prepared->totals() : runtime::PreparedTotals();
  double verify_ms = 0;
  if (prepared) {
    const auto& d = prepared->decisions();
    for (size_t i = decisions_before; i < d.size(); ++i) {
      if (d[i].bytes_hashed > 0) verify_ms += d[i].resolve_ms;
    }
  }
  const double resolve_ms = after.resolve_ms - before.resolve_ms;
  const double pack_ms = after.pack_ms - before.pack_ms;
  const double store_ms = after.store_ms - before.store_ms;
  const double init_ms = session->stats().init_ms;
  timings.resolve = resolve_ms - verify_ms;
  timings.verify = verify_ms;
  timings.map = init_ms + ms_between(t1, t2);
  timings.pack = pack_ms;
  timings.store = store_ms;
  timings.plan = ms_between(t0, t1) - resolve_ms - pack_ms - store_ms - init_ms;
  return ok_status();
}

Result<std::vector<runtime::HostTensor>> Engine::run(
    const std::map<std::string, runtime::Tensor>& inputs, const RunOptions& run_options) {
  std::lock_guard<std::mutex> lock(s_->mu);
  // The clock starts once this run has the session (an earlier run's time is
  // not this one's); a run stopped midway leaves the plan as it was, and the
  // next run overwrites every value it reads.
  const runtime::RunLimits limits(run_options);
  const runtime::RunLimits* lp = limits.active() ? &limits : nullptr;
  OP_RETURN_IF_ERROR(s_->ensure_plan_locked(inputs, {}, lp));
  const auto t0 = Clock::now();
  OP_ASSIGN_OR_RETURN(std::vector<runtime::HostTensor> outputs, s_->session->run(inputs, lp));
  s_->note_run(ms_between(t0, Clock::now()));
  return outputs;
}

void Engine::State::note_run(double run_ms) {
  timings.last_run = run_ms;
  if (first_run_pending) {
    timings.first_run = run_ms;
    first_run_pending = false;
    // The first output is out: now the memo records, off the caller's path.
    if (resolver && !memo_flush.joinable()) {
      memo_flush = std::jthread([r = resolver.get()] { r->flush_memo_records(); });
    }
  }
}

namespace {

// The bound set of a run_bound: the fed inputs and the caller's outputs.
std::set<std::string> bound_names(const std::map<std::string, runtime::Tensor>& inputs,
                                  const std::vector<std::string>& outputs) {
  std::set<std::string> names(outputs.begin(), outputs.end());
  for (const auto& [name, t] : inputs) names.insert(name);
  return names;
}

}  // namespace

Result<std::vector<Engine::OutputShape>> Engine::plan_outputs(
    const std::map<std::string, runtime::Tensor>& inputs,
    const std::vector<std::string>& bound_outputs) {
  std::lock_guard<std::mutex> lock(s_->mu);
  for (const std::string& name : bound_outputs) {
    const auto& outs = s_->session->output_names();
    if (std::find(outs.begin(), outs.end(), name) == outs.end())
      return invalid_argument("plan: '" + name + "' is not a graph output");
  }
  OP_RETURN_IF_ERROR(s_->ensure_plan_locked(inputs, bound_names(inputs, bound_outputs), nullptr));
  std::vector<OutputShape> shapes;
  for (const auto& o : s_->session->planned_outputs()) shapes.push_back({o.dtype, o.shape});
  return shapes;
}

Status Engine::run_bound(const std::map<std::string, runtime::Tensor>& inputs,
                         const std::map<std::string, runtime::Tensor>& outputs,
                         const RunOptions& run_options) {
  std::lock_guard<std::mutex> lock(s_->mu);
  const runtime::RunLimits limits(run_options);
  const runtime::RunLimits* lp = limits.active() ? &limits : nullptr;
  const auto& names = s_->session->output_names();
  std::vector<std::string> out_names;
  for (const auto& [name, t] : outputs) {
    if (std::find(names.begin(), names.end(), name) == names.end())
      return invalid_argument("run: '" + name + "' is not a graph output");
    out_names.push_back(name);
  }
  OP_RETURN_IF_ERROR(s_->ensure_plan_locked(inputs, bound_names(inputs, out_names), lp));
  std::vector<const void*> in_ptrs;
  for (const auto& in : s_->session->inputs()) {
    auto it = inputs.find(in.name);
    in_ptrs.push_back(it == inputs.end() ? nullptr : it->second.data);
  }
  const std::vector<runtime::Session::PlannedOutput> planned = s_->session->planned_outputs();
  std::vector<void*> out_ptrs(names.size(), nullptr);
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = outputs.find(names[i]);
    if (it == outputs.end()) continue;
    const runtime::Tensor& t = it->second;
    if (t.dtype != planned[i].dtype || t.shape != planned[i].shape) {
      return invalid_argument("run: output '" + names[i] + "' was given " +
                              runtime::dtype_name(t.dtype) + runtime::shape_string(t.shape) +
                              ", the plan makes " + runtime::dtype_name(planned[i].dtype) +
                              runtime::shape_string(planned[i].shape));
    }
    if (planned[i].value) {  // known at plan time: no step writes it
      if (t.nbytes()) std::memcpy(t.data, planned[i].value->data(), t.nbytes());
      continue;
    }
    out_ptrs[i] = t.data;
  }
  const auto t0 = Clock::now();
  OP_RETURN_IF_ERROR(s_->session->run_bound(in_ptrs, out_ptrs, lp));
  s_->note_run(ms_between(t0, Clock::now()));
  return ok_status();
}

std::vector<runtime::WeightDecision> Engine::weights() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  if (!s_->prepared) return {};
  return s_->prepared->decisions();
}

runtime::PreparedTotals Engine::weight_totals() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->prepared ? s_->prepared->totals() : runtime::PreparedTotals();
}

uint64_t Engine::bytes_populated() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->populated;
}

runtime::PlanStats Engine::plan_stats() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->session->stats();
}

const std::string& Engine::store_error() const { return s_->store_error; }

EngineTimings Engine::timings() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->timings;
}

}  // namespace onnx_prepack
