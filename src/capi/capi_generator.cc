// C API: token generation (op_generator_*), a thin adapter of
// onnx_prepack::Generator (include/onnx_prepack/generator.hpp) on a session's
// engine, as `onnx-prepack complete` is. Every rule on the prompt and the
// parameters is the engine's; this file checks only pointers, counts and
// the C struct's enumerations.
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "onnx_prepack/generator.hpp"

struct op_generator {
  std::unique_ptr<onnx_prepack::Generator> generator;
};

using namespace onnx_prepack;  // NOLINT: a .cc file implementing the C API
using capi::guard;

namespace {

// `values` into the caller's buffer: *count always, OUT_OF_RANGE when short.
Status copy_ids(const char* fn, const std::vector<int64_t>& values, int64_t* out, uint64_t capacity,
                uint64_t* count, const std::string& what) {
  *count = values.size();
  if (capacity < values.size()) {
    return out_of_range(std::string(fn) + ": " + what + " has " + std::to_string(values.size()) +
                        " ids, the buffer holds " + std::to_string(capacity));
  }
  if (!values.empty()) {
    OP_CAPI_REQUIRE(out, fn);
    std::memcpy(out, values.data(), values.size() * sizeof(int64_t));
  }
  return ok_status();
}

}  // namespace

op_generator_params op_generator_params_default(void) {
  op_generator_params p;
  std::memset(&p, 0, sizeof(p));
  const GeneratorParams d;
  p.max_length = d.max_length;
  p.max_new_tokens = d.max_new_tokens;
  p.do_sample = d.do_sample ? 1 : 0;
  p.temperature = d.temperature;
  p.top_k = d.top_k;
  p.top_p = d.top_p;
  p.seed = d.seed;
  p.pad_token_id = d.pad_token_id;
  return p;
}

op_status_code op_generator_create(op_session* session, const op_generator_params* params,
                                   op_generator** out) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_generator_create";
    OP_CAPI_REQUIRE(out, kFn);
    *out = nullptr;
    OP_CAPI_REQUIRE(session, kFn);
    const op_generator_params p = params != nullptr ? *params : op_generator_params_default();
    if (p.do_sample != 0 && p.do_sample != 1) {
      return invalid_argument(std::string(kFn) + ": do_sample must be 0 or 1, got " +
                              std::to_string(p.do_sample));
    }
    if (p.n_stop_ids > 0 && p.stop_ids == nullptr) {
      return invalid_argument(std::string(kFn) + ": stop_ids is null with n_stop_ids " +
                              std::to_string(p.n_stop_ids));
    }
    GeneratorParams gp;
    gp.max_length = p.max_length;
    gp.max_new_tokens = p.max_new_tokens;
    gp.do_sample = p.do_sample == 1;
    gp.temperature = p.temperature;
    gp.top_k = p.top_k;
    gp.top_p = p.top_p;
    gp.seed = p.seed;
    gp.pad_token_id = p.pad_token_id;
    if (p.n_stop_ids > 0) gp.stop_ids.assign(p.stop_ids, p.stop_ids + p.n_stop_ids);
    auto g = std::make_unique<op_generator>();
    OP_ASSIGN_OR_RETURN(g->generator, Generator::create(*session->engine, std::move(gp)));
    *out = g.release();
    return ok_status();
  });
}

op_status_code op_generator_append_tokens(op_generator* generator, const int64_t* ids,
                                          const uint64_t* row_lengths, uint64_t rows) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_generator_append_tokens";
    OP_CAPI_REQUIRE(generator, kFn);
    if (rows == 0) return invalid_argument(std::string(kFn) + ": rows is 0 (no prompt)");
    OP_CAPI_REQUIRE(row_lengths, kFn);
    uint64_t total = 0;
    for (uint64_t r = 0; r < rows; ++r) {
      if (row_lengths[r] > std::numeric_limits<uint64_t>::max() / sizeof(int64_t) - total) {
        return invalid_argument(std::string(kFn) + ": row_lengths sum past 2^64 bytes at row " +
                                std::to_string(r));
      }
      total += row_lengths[r];
    }
    if (total > 0) OP_CAPI_REQUIRE(ids, kFn);
    std::vector<std::vector<int64_t>> prompt(rows);
    const int64_t* p = ids;
    for (uint64_t r = 0; r < rows; ++r) {
      prompt[r].assign(p, p + row_lengths[r]);
      p += row_lengths[r];
    }
    return generator->generator->append_tokens(prompt);
  });
}

op_status_code op_generator_generate_next_token(op_generator* generator) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(generator, "op_generator_generate_next_token");
    return generator->generator->generate_next_token();
  });
}

op_status_code op_generator_is_done(const op_generator* generator, int* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(generator, "op_generator_is_done");
    OP_CAPI_REQUIRE(out, "op_generator_is_done");
    *out = generator->generator->is_done() ? 1 : 0;
    return ok_status();
  });
}

op_status_code op_generator_get_next_tokens(const op_generator* generator, int64_t* out,
                                            uint64_t capacity, uint64_t* count) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_generator_get_next_tokens";
    OP_CAPI_REQUIRE(generator, kFn);
    OP_CAPI_REQUIRE(count, kFn);
    return copy_ids(kFn, generator->generator->next_tokens(), out, capacity, count,
                    "the batch's next tokens");
  });
}

op_status_code op_generator_get_sequence(const op_generator* generator, uint64_t index,
                                         int64_t* out, uint64_t capacity, uint64_t* count) {
  return guard([&]() -> Status {
    constexpr const char* kFn = "op_generator_get_sequence";
    OP_CAPI_REQUIRE(generator, kFn);
    OP_CAPI_REQUIRE(count, kFn);
    *count = 0;
    const size_t batch = generator->generator->batch_size();
    if (index >= batch) {
      return out_of_range(std::string(kFn) + ": index " + std::to_string(index) +
                          " is past the batch of " + std::to_string(batch) + " sequences");
    }
    return copy_ids(kFn, generator->generator->sequence(size_t(index)), out, capacity, count,
                    "sequence " + std::to_string(index));
  });
}

op_status_code op_generator_get_stats(const op_generator* generator, op_generation_stats* out) {
  return guard([&]() -> Status {
    OP_CAPI_REQUIRE(generator, "op_generator_get_stats");
    OP_CAPI_REQUIRE(out, "op_generator_get_stats");
    const GenerationStats& s = generator->generator->stats();
    std::memset(out, 0, sizeof(*out));
    out->first_token_ms = s.first_token_ms;
    out->decode_ms = s.decode_ms;
    out->decode_tokens_per_second = s.decode_tokens_per_second();
    out->plan_ms = s.plan_ms;
    out->prompt_tokens = uint64_t(s.prompt_tokens);
    out->decode_steps = uint64_t(s.decode_steps);
    out->new_tokens = uint64_t(s.new_tokens);
    return ok_status();
  });
}

void op_generator_free(op_generator* generator) { delete generator; }
