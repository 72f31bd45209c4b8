// C API: token generation, a thin adapter of onnx_prepack::Generator
// (include/onnx_prepack/generator.hpp) on the engine an op_session holds. The
// C structs become GeneratorParams and row vectors here; every rule is the
// generator's.
#include <cstring>
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "onnx_prepack/generator.hpp"

struct op_generator {
  std::unique_ptr<onnx_prepack::Generator> gen;
  op_session* session = nullptr;  // its `generator` points back here until free
};

using namespace onnx_prepack;  // NOLINT: a .cc file implementing the C API
using capi::guard;

namespace {

// Far past any vocabulary's stop list; a count beyond it is a caller's mistake,
// refused before reading its array.
constexpr uint64_t kMaxStopIds = 1u << 16;
// Prompt ids per call: 2^28 ids (2 GiB), refused before copying.
constexpr uint64_t kMaxPromptIds = 1ull << 28;

Result<GeneratorParams> to_params(const op_generator_params& c, const char* fn) {
  if (c.do_sample != 0 && c.do_sample != 1) {
    return invalid_argument(std::string(fn) + ": do_sample must be 0 or 1, got " +
                            std::to_string(c.do_sample));
  }
  if (c.n_stop_ids > kMaxStopIds) {
    return invalid_argument(std::string(fn) + ": n_stop_ids " + std::to_string(c.n_stop_ids) +
                            " is above the limit of " + std::to_string(kMaxStopIds));
  }
  if (c.n_stop_ids > 0 && c.stop_ids == nullptr) {
    return invalid_argument(std::string(fn) + ": stop_ids is null with n_stop_ids " +
                            std::to_string(c.n_stop_ids));
  }
  GeneratorParams p;
  p.max_length = c.max_length;
  p.max_new_tokens = c.max_new_tokens;
  p.do_sample = c.do_sample == 1;
  p.temperature = c.temperature;
  p.top_k = c.top_k;
  p.top_p = c.top_p;
  p.seed = c.seed;
  if (c.n_stop_ids > 0) p.stop_ids.assign(c.stop_ids, c.stop_ids + c.n_stop_ids);
  p.pad_token_id = c.pad_token_id;
  return p;
}

// Copies `n` values into the caller's buffer when it is given (count queries pass NULL).
template <typename T>
Status copy_out(const char* fn, const char* what, const T* src, uint64_t n, T* out,
                uint64_t capacity) {
  if (out == nullptr) return ok_status();
  if (capacity < n) {
    return out_of_range(std::string(fn) + ": " + what + " holds " + std::to_string(n) +
                        " values, the buffer " + std::to_string(capacity));
  }
  if (n > 0) std::memcpy(out, src, n * sizeof(T));
  return ok_status();
}

}  // namespace

extern "C" {

op_generator_params op_generator_params_default(void) {
  op_generator_params p;
  std::memset(&p, 0, sizeof(p));
  p.temperature = 1.0f;
  p.top_p = 1.0f;
  return p;
}

op_status_code op_generator_create(op_session* session, const op_generator_params* params,
                                   op_generator** out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_generator_create";
    OP_CAPI_REQUIRE(out, kFn);
    *out = nullptr;
    OP_CAPI_REQUIRE(session, kFn);
    if (session->generator != nullptr) {
      return invalid_argument(std::string(kFn) +
                              ": the session already has a generator (op_generator_free it first)");
    }
    const op_generator_params c = params != nullptr ? *params : op_generator_params_default();
    OP_ASSIGN_OR_RETURN(GeneratorParams p, to_params(c, kFn));
    auto g = std::make_unique<op_generator>();
    OP_ASSIGN_OR_RETURN(g->gen, Generator::create(*session->engine, std::move(p)));
    g->session = session;
    session->generator = g.get();
    *out = g.release();
    return ok_status();
  });
}

void op_generator_free(op_generator* generator) {
  if (generator == nullptr) return;
  if (generator->session != nullptr) generator->session->generator = nullptr;
  delete generator;
}

op_status_code op_generator_append_tokens(op_generator* generator, const int64_t* ids,
                                          const int64_t* row_lengths, uint64_t rows) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_generator_append_tokens";
    OP_CAPI_REQUIRE(generator, kFn);
    if (rows > 0) OP_CAPI_REQUIRE(row_lengths, kFn);
    uint64_t total = 0;
    for (uint64_t r = 0; r < rows; ++r) {
      if (row_lengths[r] < 0) {
        return invalid_argument(std::string(kFn) + ": row_lengths[" + std::to_string(r) + "] " +
                                std::to_string(row_lengths[r]) + " is negative");
      }
      total += uint64_t(row_lengths[r]);
      if (total > kMaxPromptIds) {
        return invalid_argument(std::string(kFn) + ": more than " + std::to_string(kMaxPromptIds) +
                                " ids in the rows");
      }
    }
    if (total > 0) OP_CAPI_REQUIRE(ids, kFn);
    std::vector<std::vector<int64_t>> batch(rows);
    const int64_t* p = ids;
    for (uint64_t r = 0; r < rows; ++r) {
      batch[r].assign(p, p + row_lengths[r]);
      p += row_lengths[r];
    }
    return generator->gen->append_tokens(batch);
  });
}

op_status_code op_generator_generate_next_token(op_generator* generator) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(generator, "op_generator_generate_next_token");
    return generator->gen->generate_next_token();
  });
}

op_status_code op_generator_is_done(const op_generator* generator, int32_t* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(generator, "op_generator_is_done");
    OP_CAPI_REQUIRE(out, "op_generator_is_done");
    *out = generator->gen->is_done() ? 1 : 0;
    return ok_status();
  });
}

op_status_code op_generator_get_next_tokens(const op_generator* generator, int64_t* out,
                                            uint64_t capacity, uint64_t* count) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_generator_get_next_tokens";
    OP_CAPI_REQUIRE(generator, kFn);
    OP_CAPI_REQUIRE(count, kFn);
    const std::vector<int64_t> next = generator->gen->next_tokens();
    *count = next.size();
    return copy_out(kFn, "the batch", next.data(), next.size(), out, capacity);
  });
}

op_status_code op_generator_get_sequence(const op_generator* generator, uint64_t index,
                                         int64_t* out, uint64_t capacity, uint64_t* length) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_generator_get_sequence";
    OP_CAPI_REQUIRE(generator, kFn);
    OP_CAPI_REQUIRE(length, kFn);
    const size_t batch = generator->gen->batch_size();
    if (index >= batch) {
      return out_of_range(std::string(kFn) + ": index " + std::to_string(index) +
                          " is past the batch of " + std::to_string(batch) + " sequences");
    }
    const std::vector<int64_t>& seq = generator->gen->sequence(size_t(index));
    *length = seq.size();
    return copy_out(kFn, ("sequence " + std::to_string(index)).c_str(), seq.data(), seq.size(), out,
                    capacity);
  });
}

op_status_code op_generator_get_logits(const op_generator* generator, float* out, uint64_t capacity,
                                       uint64_t* count) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_generator_get_logits";
    OP_CAPI_REQUIRE(generator, kFn);
    OP_CAPI_REQUIRE(count, kFn);
    const std::vector<float>& logits = generator->gen->last_logits();
    *count = logits.size();
    return copy_out(kFn, "the logits", logits.data(), logits.size(), out, capacity);
  });
}

op_status_code op_generator_get_stats(const op_generator* generator, op_generation_stats* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(generator, "op_generator_get_stats");
    OP_CAPI_REQUIRE(out, "op_generator_get_stats");
    const Generator& g = *generator->gen;
    const GenerationStats& s = g.stats();
    op_generation_stats r;
    std::memset(&r, 0, sizeof(r));
    r.first_token_ms = s.first_token_ms;
    r.decode_ms = s.decode_ms;
    r.plan_ms = s.plan_ms;
    r.decode_tokens_per_second = s.decode_tokens_per_second();
    r.prompt_tokens = s.prompt_tokens;
    r.decode_steps = s.decode_steps;
    r.new_tokens = s.new_tokens;
    r.batch_size = g.batch_size();
    r.vocab_size = g.vocab_size();
    r.form = g.form();
    *out = r;
    return ok_status();
  });
}

}  // extern "C"
