/* The C API's token generation (op_generator_*) from C (C11), linked to
 * libonnx_prepack.so, beside the CLI (tests/capi/c_api_generator_test.cc
 * checks it against the C++ Generator from C++).
 *
 *   c_api_generator_c ONNX_PREPACK_CLI WORK_DIR
 *     writes the tiny genai decoder with the CLI (generate decoder --preset
 *     tiny) and checks: greedy tokens equal `onnx-prepack complete`'s for one
 *     prompt and for a batch of 2 prompts of different lengths; max_new_tokens
 *     bounds each sequence and the stats count it; a stop id ends a sequence
 *     (kept); seeded sampling repeats with the seed and differs across seeds;
 *     and bad input is a clear error code with a message naming the problem
 *     (never a crash): NULL handles, an empty row, ids past the vocabulary or
 *     negative, max_length shorter than the prompt, top_p 0, temperature 0
 *     with sampling, do_sample 2, a short buffer, an index past the batch, a
 *     step before the prompt or after the end.
 *   c_api_generator_c --tokens MODEL MAX_NEW_TOKENS IDS [IDS...]
 *     prints each prompt's greedy new tokens, comma-separated, one line per
 *     prompt (tests/python/test_genai.py compares the frontends with it).
 *
 * Exits 0 when every check passed. */
#define _POSIX_C_SOURCE 200809L /* popen: the CLI's output */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_prepack/c_api.h"

#include "c_check.h"

/* The call returns `code` and the message holds `words`. */
#define CHECK_ERROR(call, code, words)                                                             \
  do {                                                                                             \
    op_status_code rc_ = (call);                                                                   \
    if (rc_ != (code) || strstr(op_last_error_message(), (words)) == NULL) {                       \
      fprintf(stderr, "%s:%d: %s returned %s '%s', expected %s naming '%s'\n", __FILE__, __LINE__, \
              #call, op_status_code_name(rc_), op_last_error_message(), op_status_code_name(code), \
              (words));                                                                            \
      ++g_failures;                                                                                \
    }                                                                                              \
  } while (0)

enum { kMaxTokens = 256, kVocab = 512, kSteps = 12 };

static const int64_t kPrompt[] = {5, 17, 300, 42, 7, 99, 128, 3};
static const int64_t kShort[] = {11, 23, 250, 4, 61};
enum { kPromptLen = 8, kShortLen = 5 };

/* Greedy or sampled generation of `rows` prompts; new tokens of row r into
 * out[r][0..n[r]-1]. Returns 0 when every call succeeded. */
static int generate(op_session* s, const op_generator_params* p, const int64_t* ids,
                    const uint64_t* lens, uint64_t rows, int64_t out[][kMaxTokens], uint64_t* n,
                    op_generation_stats* stats) {
  op_generator* g = NULL;
  int ok = 1;
  if (op_generator_create(s, p, &g) != OP_STATUS_OK ||
      op_generator_append_tokens(g, ids, lens, rows) != OP_STATUS_OK) {
    fprintf(stderr, "generate: %s\n", op_last_error_message());
    op_generator_free(g);
    return 1;
  }
  int done = 0;
  while (ok && op_generator_is_done(g, &done) == OP_STATUS_OK && !done) {
    ok = op_generator_generate_next_token(g) == OP_STATUS_OK;
  }
  for (uint64_t r = 0; ok && r < rows; ++r) {
    int64_t seq[kMaxTokens];
    uint64_t len = 0;
    ok = op_generator_get_sequence(g, r, seq, kMaxTokens, &len) == OP_STATUS_OK && len >= lens[r];
    if (!ok) break;
    n[r] = len - lens[r];
    memcpy(out[r], seq + lens[r], n[r] * sizeof(int64_t));
  }
  if (ok && stats != NULL) ok = op_generator_get_stats(g, stats) == OP_STATUS_OK;
  if (!ok) fprintf(stderr, "generate: %s\n", op_last_error_message());
  op_generator_free(g);
  return ok ? 0 : 1;
}

static op_session* open_session(const char* model) {
  op_session_options so = op_session_options_default();
  so.n_threads = 1;
  op_session* s = NULL;
  if (op_session_create(model, &so, &s) != OP_STATUS_OK) {
    fprintf(stderr, "op_session_create %s: %s\n", model, op_last_error_message());
    return NULL;
  }
  return s;
}

/* "1,2,3" -> ids; returns the count, -1 on a malformed list. */
static int parse_ids(const char* text, int64_t* ids, int cap) {
  int n = 0;
  const char* p = text;
  while (*p != '\0') {
    char* end = NULL;
    long long v = strtoll(p, &end, 10);
    if (end == p || n >= cap) return -1;
    ids[n++] = v;
    p = end;
    if (*p == ',') ++p;
  }
  return n;
}

static void print_ids(FILE* f, const int64_t* ids, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) fprintf(f, "%s%lld", i ? "," : "", (long long)ids[i]);
  fputc('\n', f);
}

static int tokens_mode(int argc, char** argv) {
  /* --tokens MODEL MAX_NEW IDS... */
  if (argc < 5) return 2;
  static int64_t ids[16 * kMaxTokens], out[16][kMaxTokens];
  uint64_t lens[16];
  uint64_t n[16];
  uint64_t rows = 0, total = 0;
  for (int a = 4; a < argc && rows < 16; ++a, ++rows) {
    int k = parse_ids(argv[a], ids + total, kMaxTokens);
    if (k < 0) return 2;
    lens[rows] = (uint64_t)k;
    total += (uint64_t)k;
  }
  op_session* s = open_session(argv[2]);
  if (s == NULL) return 1;
  op_generator_params p = op_generator_params_default();
  p.max_new_tokens = atoll(argv[3]);
  int rc = generate(s, &p, ids, lens, rows, out, n, NULL);
  for (uint64_t r = 0; rc == 0 && r < rows; ++r) print_ids(stdout, out[r], n[r]);
  op_session_free(s);
  return rc;
}

/* The first `rows` lines of `onnx-prepack complete` (the new tokens of each prompt). */
static int cli_tokens(const char* cli, const char* model, const char* prompts, int steps,
                      int64_t out[][kMaxTokens], uint64_t* n, int rows) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' complete '%s' %s --max-new-tokens %d --threads 1", cli, model,
           prompts, steps);
  FILE* f = popen(cmd, "r");
  if (f == NULL) return 1;
  char line[8192];
  int r = 0;
  for (; r < rows && fgets(line, sizeof line, f) != NULL; ++r) {
    line[strcspn(line, "\n")] = '\0';
    int k = parse_ids(line, out[r], kMaxTokens);
    if (k < 0) break;
    n[r] = (uint64_t)k;
  }
  int status = pclose(f);
  return (r == rows && status == 0) ? 0 : 1;
}

static int same(const int64_t* a, uint64_t na, const int64_t* b, uint64_t nb) {
  return na == nb && memcmp(a, b, na * sizeof(int64_t)) == 0;
}

static void check_errors(op_session* s, const int64_t* greedy) {
  op_generator* g = NULL;
  op_generator_params p = op_generator_params_default();
  const uint64_t lens[] = {kPromptLen};

  /* Handles and parameters. */
  CHECK_ERROR(op_generator_create(NULL, &p, &g), OP_STATUS_INVALID_ARGUMENT, "session is null");
  CHECK(g == NULL);
  CHECK_ERROR(op_generator_create(s, &p, NULL), OP_STATUS_INVALID_ARGUMENT, "out is null");
  CHECK_ERROR(op_generator_create(s, NULL, &g), OP_STATUS_INVALID_ARGUMENT,
              "set max_length or max_new_tokens");
  p.max_new_tokens = 4;
  p.top_p = 0.0f;
  CHECK_ERROR(op_generator_create(s, &p, &g), OP_STATUS_INVALID_ARGUMENT, "top_p 0");
  p.top_p = 1.0f;
  p.do_sample = 1;
  p.temperature = 0.0f;
  CHECK_ERROR(op_generator_create(s, &p, &g), OP_STATUS_INVALID_ARGUMENT, "temperature 0");
  p.temperature = -1.0f;
  CHECK_ERROR(op_generator_create(s, &p, &g), OP_STATUS_INVALID_ARGUMENT, "temperature -1");
  p.temperature = 1.0f;
  p.do_sample = 2;
  CHECK_ERROR(op_generator_create(s, &p, &g), OP_STATUS_INVALID_ARGUMENT, "do_sample must be");
  p.do_sample = 0;
  p.n_stop_ids = 2;
  CHECK_ERROR(op_generator_create(s, &p, &g), OP_STATUS_INVALID_ARGUMENT, "stop_ids is null");
  p.n_stop_ids = 0;
  p.pad_token_id = kVocab;
  CHECK_ERROR(op_generator_create(s, &p, &g), OP_STATUS_INVALID_ARGUMENT, "pad_token_id 512");
  p.pad_token_id = 0;
  CHECK(g == NULL);

  /* Prompts. */
  CHECK_OK(op_generator_create(s, &p, &g));
  CHECK_ERROR(op_generator_generate_next_token(g), OP_STATUS_INVALID_ARGUMENT,
              "append_tokens (the prompt) comes first");
  CHECK_ERROR(op_generator_append_tokens(g, kPrompt, lens, 0), OP_STATUS_INVALID_ARGUMENT,
              "rows is 0");
  CHECK_ERROR(op_generator_append_tokens(g, kPrompt, NULL, 1), OP_STATUS_INVALID_ARGUMENT,
              "row_lengths is null");
  CHECK_ERROR(op_generator_append_tokens(g, NULL, lens, 1), OP_STATUS_INVALID_ARGUMENT,
              "ids is null");
  const uint64_t empty[] = {0};
  CHECK_ERROR(op_generator_append_tokens(g, kPrompt, empty, 1), OP_STATUS_INVALID_ARGUMENT,
              "row 0 of the tokens is empty");
  const int64_t past_vocab[] = {1, kVocab}, negative[] = {1, -1}, huge[] = {INT64_MAX, 2};
  const uint64_t two[] = {2};
  CHECK_ERROR(op_generator_append_tokens(g, past_vocab, two, 1), OP_STATUS_INVALID_ARGUMENT,
              "token id 512 in row 0");
  CHECK_ERROR(op_generator_append_tokens(g, negative, two, 1), OP_STATUS_INVALID_ARGUMENT,
              "token id -1 in row 0");
  CHECK_ERROR(op_generator_append_tokens(g, huge, two, 1), OP_STATUS_INVALID_ARGUMENT,
              "token id 9223372036854775807 in row 0");
  uint64_t n = 0;
  CHECK_ERROR(op_generator_get_sequence(g, 0, NULL, 0, &n), OP_STATUS_OUT_OF_RANGE,
              "past the batch of 0");
  /* The generator still works after the refused calls. */
  CHECK_OK(op_generator_append_tokens(g, kPrompt, lens, 1));
  int64_t next[4];
  n = 0;
  CHECK_ERROR(op_generator_get_next_tokens(g, next, 0, &n), OP_STATUS_OUT_OF_RANGE,
              "the buffer holds 0");
  CHECK(n == 1); /* the count is set when the buffer is short */
  CHECK_OK(op_generator_get_next_tokens(g, next, 4, &n));
  CHECK(n == 1 && next[0] == greedy[0]);
  int64_t seq[kMaxTokens];
  CHECK_ERROR(op_generator_get_sequence(g, 0, seq, 3, &n), OP_STATUS_OUT_OF_RANGE,
              "sequence 0 has 9 ids, the buffer holds 3");
  CHECK_ERROR(op_generator_get_sequence(g, 1, seq, kMaxTokens, &n), OP_STATUS_OUT_OF_RANGE,
              "index 1 is past the batch of 1");
  CHECK_ERROR(op_generator_get_sequence(g, 0, seq, kMaxTokens, NULL), OP_STATUS_INVALID_ARGUMENT,
              "count is null");
  int done = 1;
  while (op_generator_is_done(g, &done) == OP_STATUS_OK && !done) {
    CHECK_OK(op_generator_generate_next_token(g));
  }
  CHECK_ERROR(op_generator_generate_next_token(g), OP_STATUS_INVALID_ARGUMENT,
              "every sequence is done");
  CHECK_ERROR(op_generator_is_done(NULL, &done), OP_STATUS_INVALID_ARGUMENT, "generator is null");
  CHECK_ERROR(op_generator_is_done(g, NULL), OP_STATUS_INVALID_ARGUMENT, "out is null");
  op_generator_free(g);
  op_generator_free(NULL);

  /* max_length shorter than the prompt: refused at the prompt. */
  p.max_new_tokens = 0;
  p.max_length = 4;
  g = NULL;
  CHECK_OK(op_generator_create(s, &p, &g));
  CHECK_ERROR(op_generator_append_tokens(g, kPrompt, lens, 1), OP_STATUS_INVALID_ARGUMENT,
              "leaves no room");
  op_generator_free(g);
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "--tokens") == 0) return tokens_mode(argc, argv);
  if (argc != 3) {
    fprintf(stderr,
            "usage: c_api_generator_c ONNX_PREPACK_CLI WORK_DIR\n"
            "       c_api_generator_c --tokens MODEL MAX_NEW_TOKENS IDS [IDS...]\n");
    return 2;
  }
  const char* cli = argv[1];
  char cmd[4096], model[1200];
  snprintf(model, sizeof model, "%s/decoder.onnx", argv[2]);
  snprintf(cmd, sizeof cmd,
           "rm -rf '%s' && mkdir -p '%s' && '%s' generate decoder --preset tiny --form genai -o "
           "'%s' > /dev/null",
           argv[2], argv[2], cli, model);
  if (system(cmd) != 0) return 2;
  op_session* s = open_session(model);
  if (s == NULL) return 1;

  static int64_t ours[2][kMaxTokens], theirs[2][kMaxTokens], other[2][kMaxTokens];
  uint64_t n_ours[2] = {0}, n_theirs[2] = {0}, n_other[2] = {0};
  op_generation_stats st;
  op_generator_params p = op_generator_params_default();
  p.max_new_tokens = kSteps;

  /* Greedy, one prompt: the CLI's tokens, max_new_tokens of them, and the stats. */
  const uint64_t lens1[] = {kPromptLen};
  CHECK(generate(s, &p, kPrompt, lens1, 1, ours, n_ours, &st) == 0);
  CHECK(cli_tokens(cli, model, "--prompt 5,17,300,42,7,99,128,3", kSteps, theirs, n_theirs, 1) ==
        0);
  CHECK(n_ours[0] == kSteps);
  CHECK(same(ours[0], n_ours[0], theirs[0], n_theirs[0]));
  CHECK(st.prompt_tokens == kPromptLen && st.new_tokens == kSteps &&
        st.decode_steps == kSteps - 1 && st.first_token_ms > 0 && st.decode_ms > 0);

  /* A batch of two prompts of different lengths: the CLI's batch. */
  int64_t ids2[kPromptLen + kShortLen];
  memcpy(ids2, kPrompt, sizeof kPrompt);
  memcpy(ids2 + kPromptLen, kShort, sizeof kShort);
  const uint64_t lens2[] = {kPromptLen, kShortLen};
  CHECK(generate(s, &p, ids2, lens2, 2, other, n_other, &st) == 0);
  CHECK(cli_tokens(cli, model, "--prompt 5,17,300,42,7,99,128,3 --prompt 11,23,250,4,61", kSteps,
                   theirs, n_theirs, 2) == 0);
  CHECK(same(other[0], n_other[0], theirs[0], n_theirs[0]));
  CHECK(same(other[1], n_other[1], theirs[1], n_theirs[1]));
  CHECK(n_other[1] == kSteps && st.prompt_tokens == kPromptLen + kShortLen);
  CHECK(!same(other[0], n_other[0], other[1], n_other[1]));

  /* A stop id: the sequence ends at its first occurrence, the id kept. */
  const int64_t stop = ours[0][2];
  uint64_t first = 0;
  while (ours[0][first] != stop) ++first;
  op_generator_params ps = p;
  ps.stop_ids = &stop;
  ps.n_stop_ids = 1;
  CHECK(generate(s, &ps, kPrompt, lens1, 1, other, n_other, NULL) == 0);
  CHECK(same(other[0], n_other[0], ours[0], first + 1));

  /* Seeded sampling: the same seed, the same tokens; another seed, others. */
  op_generator_params pr = p;
  pr.do_sample = 1;
  pr.temperature = 1.5f;
  pr.top_k = 50;
  pr.top_p = 0.95f;
  pr.seed = 7;
  CHECK(generate(s, &pr, kPrompt, lens1, 1, other, n_other, NULL) == 0);
  CHECK(generate(s, &pr, kPrompt, lens1, 1, theirs, n_theirs, NULL) == 0);
  CHECK(same(other[0], n_other[0], theirs[0], n_theirs[0]));
  pr.seed = 8;
  CHECK(generate(s, &pr, kPrompt, lens1, 1, theirs, n_theirs, NULL) == 0);
  CHECK(!same(other[0], n_other[0], theirs[0], n_theirs[0]));
  CHECK(!same(other[0], n_other[0], ours[0], n_ours[0])); /* sampling is not greedy here */

  check_errors(s, ours[0]);
  /* The session runs for itself again once its generators are freed. */
  CHECK_ERROR(op_session_run(s, NULL, 0), OP_STATUS_INVALID_ARGUMENT, "is not fed");
  op_session_free(s);
  if (g_failures) fprintf(stderr, "%d checks failed\n", g_failures);
  return g_failures ? 1 : 0;
}
