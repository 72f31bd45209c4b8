/* The C API from C (C11): usage c_api_test ONNX_PREPACK_CLI WORK_DIR.
 * Builds its models with the CLI (generate, compile), then checks through
 * libonnx_prepack.so that: compiled weights hit and plain ones miss with
 * not_found, digests equal `digest --json`, a caller's pack written back with
 * op_resolver_store hits from the cache store with the same bytes, and session
 * outputs are bitwise equal between the plain and the compiled model and to
 * `onnx-prepack run`. Exits 0 when every check passed. */
#include "onnx_prepack/c_api.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"

enum { kWidth = 64, kBatch = 3, kLayers = 3 };

static char g_cli[1024];
static char g_dir[1024];

static void path_of(char* out, size_t cap, const char* name) {
  snprintf(out, cap, "%s/%s", g_dir, name);
}

static int run_cli(const char* args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' %s", g_cli, args);
  int rc = system(cmd);
  if (rc != 0) fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
  return rc;
}

static char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = (char*)malloc((size_t)n + 1);
  if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf != NULL) {
    buf[n] = '\0';
    if (size != NULL) *size = (size_t)n;
  }
  return buf;
}

/* Hex digest of `name` in the `digest --json` output, or 0. */
static int json_digest(const char* json, const char* name, char hex[65]) {
  char key[256];
  snprintf(key, sizeof key, "\"name\": \"%s\"", name);
  const char* p = strstr(json, key);
  if (p == NULL) return 0;
  p = strstr(p, "\"digest\": \"");
  if (p == NULL) return 0;
  p += strlen("\"digest\": \"");
  memcpy(hex, p, 64);
  hex[64] = '\0';
  return 1;
}

static void to_hex(const uint8_t* d, char hex[65]) {
  for (int i = 0; i < 32; ++i) snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static void write_input_npy(const char* path, const float* x) {
  char header[128];
  int n = snprintf(header, sizeof header,
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", kBatch, kWidth);
  int total = 10 + n + 1;
  int pad = (64 - total % 64) % 64;
  FILE* f = fopen(path, "wb");
  if (f == NULL) {
    ++g_failures;
    return;
  }
  uint16_t hlen = (uint16_t)(n + pad + 1);
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(hlen & 0xff, f);
  fputc(hlen >> 8, f);
  fwrite(header, 1, (size_t)n, f);
  for (int i = 0; i < pad; ++i) fputc(' ', f);
  fputc('\n', f);
  fwrite(x, sizeof(float), (size_t)kBatch * kWidth, f);
  fclose(f);
}

/* The data of a .npy file (version 1-3 header), or NULL. */
static const char* npy_data(const char* file, size_t size, size_t* data_size) {
  if (size < 12 || memcmp(file, "\x93NUMPY", 6) != 0) return NULL;
  size_t start = 0;
  if (file[6] == 1) {
    start = 10 + (size_t)((uint8_t)file[8] | ((uint8_t)file[9] << 8));
  } else {
    start = 12 + (size_t)((uint8_t)file[8] | ((uint8_t)file[9] << 8) | ((uint8_t)file[10] << 16));
  }
  if (start > size) return NULL;
  *data_size = size - start;
  return file + start;
}

static void test_errors(void) {
  op_model* m = (op_model*)1;
  CHECK(op_model_open(NULL, &m) == OP_STATUS_INVALID_ARGUMENT);
  CHECK(m == NULL);
  CHECK(strstr(op_last_error_message(), "path is null") != NULL);
  CHECK(op_last_error_code() == OP_STATUS_INVALID_ARGUMENT);
  char missing[1200];
  path_of(missing, sizeof missing, "no-such-model.onnx");
  op_status_code rc = op_model_open(missing, &m);
  CHECK(rc != OP_STATUS_OK && m == NULL);
  CHECK(strstr(op_last_error_message(), "no-such-model.onnx") != NULL);
  CHECK(op_resolve(NULL, "w", NULL, 0, NULL) == OP_STATUS_INVALID_ARGUMENT);
  CHECK(op_session_run(NULL, NULL, 0) == OP_STATUS_INVALID_ARGUMENT);
  op_model_free(NULL);
  op_resolver_free(NULL);
  op_session_free(NULL);
  CHECK(strcmp(op_status_code_name(OP_STATUS_DATA_LOSS), "data_loss") == 0);
}

static void test_model(const char* plain_path, const char* compiled_path, const char* digest_json) {
  op_model* plain = NULL;
  op_model* compiled = NULL;
  CHECK_OK(op_model_open(plain_path, &plain));
  CHECK_OK(op_model_open(compiled_path, &compiled));
  CHECK(strcmp(op_last_error_message(), "") == 0);
  if (plain == NULL || compiled == NULL) return;

  op_model_counts pc, cc;
  CHECK_OK(op_model_get_counts(plain, &pc));
  CHECK_OK(op_model_get_counts(compiled, &cc));
  CHECK(pc.initializers == 2 * kLayers);
  CHECK(pc.compiled_tensors == 0);
  /* two targets (AVX2 and AVX-512 formats) per weight */
  CHECK(cc.compiled_tensors == 2 * kLayers);
  CHECK(cc.devices == 2);
  CHECK(cc.opset == 17);
  const char* name = NULL;
  CHECK_OK(op_model_initializer_name(plain, 0, &name));
  CHECK(name != NULL && strcmp(name, "fc0.weight") == 0);
  CHECK(op_model_initializer_name(plain, 1000, &name) == OP_STATUS_OUT_OF_RANGE);

  uint64_t n_errors = 99, n_warnings = 99;
  CHECK_OK(op_model_check(compiled, &n_errors, &n_warnings));
  CHECK(n_errors == 0);
  op_diagnostic diag;
  CHECK(op_model_check_diagnostic(compiled, OP_DIAGNOSTIC_ERROR, 0, &diag) ==
        OP_STATUS_OUT_OF_RANGE);

  /* digests equal the CLI's, for every initializer, whatever the threads */
  for (uint64_t i = 0; i < pc.initializers; ++i) {
    CHECK_OK(op_model_initializer_name(plain, i, &name));
    uint8_t d1[32], d4[32];
    char hex[65], want[65];
    CHECK_OK(op_tensor_digest(plain, name, "blake3", 1, d1));
    CHECK_OK(op_tensor_digest(compiled, name, "blake3", 4, d4));
    CHECK(memcmp(d1, d4, 32) == 0);
    to_hex(d1, hex);
    CHECK(json_digest(digest_json, name, want));
    CHECK(strcmp(hex, want) == 0);
  }
  uint8_t d[32];
  CHECK(op_tensor_digest(plain, "nope", "blake3", 1, d) == OP_STATUS_NOT_FOUND);
  CHECK(op_tensor_digest(plain, "fc0.weight", "md5", 1, d) == OP_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(op_last_error_message(), "md5") != NULL);

  /* resolver: our formats on this host */
  op_acceptable_format formats[8];
  size_t n_formats = 0;
  CHECK_OK(op_builtin_formats(0, OP_DTYPE_FLOAT, 1, formats, 8, &n_formats));
  CHECK(n_formats >= 1 && n_formats <= 8);

  op_resolver* rp = NULL;
  op_resolver* rc = NULL;
  CHECK_OK(op_resolver_create(plain, NULL, &rp));
  CHECK_OK(op_resolver_create(compiled, NULL, &rc));
  op_resolution res;
  op_resolution hit0;
  memset(&hit0, 0, sizeof hit0);
  for (int layer = 0; layer < kLayers; ++layer) {
    char w[64];
    snprintf(w, sizeof w, "fc%d.weight", layer);
    CHECK_OK(op_resolve(rp, w, formats, n_formats, &res));
    CHECK(res.hit == 0);
    CHECK(strcmp(res.reason, "not_found") == 0);
    CHECK(res.payload == NULL);
    CHECK(res.bytes_to_pack == (uint64_t)kWidth * kWidth * 4);

    CHECK_OK(op_resolve(rc, w, formats, n_formats, &res));
    CHECK(res.hit == 1);
    CHECK(strcmp(res.reason, "") == 0);
    CHECK(res.entry >= 0 && res.entry < (int32_t)cc.compiled_tensors);
    CHECK(res.format_index == 0); /* the best format of this host is compiled */
    CHECK(res.payload != NULL && res.payload_size >= (uint64_t)kWidth * kWidth * 4);
    CHECK(res.payload_external == 1);
    CHECK(((uintptr_t)res.payload % 4096) == 0);
    CHECK(res.n_dims > 0 && res.dims != NULL);
    CHECK(res.verified == 1);
    CHECK(res.bytes_hashed > 0);
    if (layer == 0) hit0 = res;
  }
  /* the first hit's payload is still valid after later requests */
  CHECK(hit0.payload != NULL && hit0.payload_size > 0);
  volatile uint8_t sink = hit0.payload[hit0.payload_size - 1];
  (void)sink;

  /* a format version we do not have: format_version miss */
  op_acceptable_format other = formats[0];
  other.format_version = "999";
  CHECK_OK(op_resolve(rc, "fc0.weight", &other, 1, &res));
  CHECK(res.hit == 0 && strcmp(res.reason, "format_version") == 0);
  /* a host without the ISA: incompatible_device */
  op_acceptable_format all[8];
  size_t n_all = 0;
  CHECK_OK(op_builtin_formats(0, OP_DTYPE_FLOAT, 0, all, 8, &n_all));
  op_resolver_options ro = op_resolver_options_default();
  ro.architecture = "x86_64-v2";
  op_resolver* r_old = NULL;
  CHECK_OK(op_resolver_create(compiled, &ro, &r_old));
  CHECK_OK(op_resolve(r_old, "fc0.weight", all, n_all, &res));
  CHECK(res.hit == 0 && strcmp(res.reason, "incompatible_device") == 0);
  op_resolver_free(r_old);
  ro.architecture = "not-an-arch";
  CHECK(op_resolver_create(compiled, &ro, &r_old) != OP_STATUS_OK && r_old == NULL);

  /* write-back: the caller packed on a miss (here: the compiled payload, same
   * source content), later loads of the plain model hit from the cache store */
  char cache[1200];
  path_of(cache, sizeof cache, "cache");
  ro = op_resolver_options_default();
  ro.cache_dir = cache;
  ro.cache_mode = OP_CACHE_READ_WRITE;
  op_resolver* rw = NULL;
  CHECK_OK(op_resolver_create(plain, &ro, &rw));
  CHECK_OK(op_resolve(rw, "fc0.weight", formats, n_formats, &res));
  CHECK(res.hit == 0);
  CHECK_OK(op_resolver_store(rw, "fc0.weight", &formats[hit0.format_index], NULL, 0, hit0.dims,
                             hit0.n_dims, hit0.payload, hit0.payload_size));
  /* a payload of the wrong size is refused before anything is written */
  CHECK(op_resolver_store(rw, "fc1.weight", &formats[0], NULL, 0, hit0.dims, hit0.n_dims,
                          hit0.payload, hit0.payload_size - 4) == OP_STATUS_INVALID_ARGUMENT);
  op_resolver_free(rw);
  op_model_free(plain); /* the resolver below shares the model: freeing the handle is fine */
  plain = NULL;
  op_model* plain2 = NULL;
  CHECK_OK(op_model_open(plain_path, &plain2));
  ro.cache_mode = OP_CACHE_READ_ONLY;
  CHECK_OK(op_resolver_create(plain2, &ro, &rw));
  op_model_free(plain2);
  CHECK_OK(op_resolve(rw, "fc0.weight", formats, n_formats, &res));
  CHECK(res.hit == 1);
  CHECK(res.entry == -1);
  CHECK(strstr(res.detail, "cache store") != NULL);
  CHECK(res.payload_size == hit0.payload_size);
  if (res.payload_size == hit0.payload_size)
    CHECK(memcmp(res.payload, hit0.payload, (size_t)res.payload_size) == 0);
  CHECK_OK(op_resolve(rw, "fc1.weight", formats, n_formats, &res));
  CHECK(res.hit == 0 && strcmp(res.reason, "not_found") == 0);
  op_resolver_totals tot;
  CHECK_OK(op_resolver_get_totals(rw, &tot));
  CHECK(tot.hits == 1 && tot.misses == 1);
  op_resolver_free(rw);

  op_resolver_free(rp);
  op_resolver_free(rc);
  op_model_free(compiled);
}

/* Runs `path` on x; copies output y into out. Returns hits. */
static uint64_t run_session(const char* path, const op_session_options* so, const float* x,
                            float* out, const char* want_reason) {
  op_session* s = NULL;
  CHECK_OK(op_session_create(path, so, &s));
  if (s == NULL) return 0;
  size_t n = 0;
  CHECK_OK(op_session_input_count(s, &n));
  CHECK(n == 1);
  op_value_info info;
  CHECK_OK(op_session_input_info(s, 0, &info));
  CHECK(strcmp(info.name, "x") == 0 && info.dtype == OP_DTYPE_FLOAT && info.rank == 2);
  CHECK_OK(op_session_output_count(s, &n));
  CHECK(n == 1);

  int64_t dims[2] = {kBatch, kWidth};
  op_input in = {"x", OP_DTYPE_FLOAT, x, dims, 2};
  CHECK(op_session_output(s, 0, NULL) == OP_STATUS_INVALID_ARGUMENT);
  CHECK_OK(op_session_run(s, &in, 1));
  op_tensor_view v;
  CHECK_OK(op_session_output(s, 0, &v));
  CHECK(strcmp(v.name, "y") == 0 && v.dtype == OP_DTYPE_FLOAT && v.rank == 2);
  CHECK(v.rank == 2 && v.dims[0] == kBatch && v.dims[1] == kWidth);
  CHECK(v.nbytes == sizeof(float) * kBatch * kWidth);
  CHECK(op_session_output_copy(s, 0, out, 16) == OP_STATUS_OUT_OF_RANGE);
  CHECK_OK(op_session_output_copy(s, 0, out, sizeof(float) * kBatch * kWidth));

  /* a second run gives the same bytes without planning again */
  CHECK_OK(op_session_run(s, &in, 1));
  CHECK_OK(op_session_output(s, 0, &v));
  CHECK(memcmp(v.data, out, sizeof(float) * kBatch * kWidth) == 0);

  size_t nw = 0;
  CHECK_OK(op_session_weight_count(s, &nw));
  CHECK(nw == kLayers);
  uint64_t hits = 0;
  for (size_t i = 0; i < nw; ++i) {
    op_weight_report w;
    CHECK_OK(op_session_weight(s, i, &w));
    if (strcmp(w.decision, "hit") == 0) {
      ++hits;
      CHECK(w.bytes_mapped > 0 && strcmp(w.reason, "") == 0);
    } else {
      CHECK(strcmp(w.decision, "miss") == 0);
      CHECK(w.bytes_packed > 0);
      if (want_reason != NULL) CHECK(strcmp(w.reason, want_reason) == 0);
    }
  }
  op_session_timings t;
  CHECK_OK(op_session_get_timings(s, &t));
  CHECK(t.parse > 0 && t.first_run > 0 && t.last_run > 0);
  CHECK(t.hits == hits && t.hits + t.misses == kLayers);

  /* errors keep the session usable */
  in.name = "nope";
  CHECK(op_session_run(s, &in, 1) == OP_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(op_last_error_message(), "'nope': not a graph input") != NULL);
  CHECK(op_session_run(s, NULL, 0) == OP_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(op_last_error_message(), "'x' is not fed") != NULL);
  op_session_free(s);
  return hits;
}

static void count_progress(size_t done, size_t total, const char* what, void* user) {
  if (done < total && strncmp(what, "packing ", 8) == 0) ++*(int*)user;
}

/* op_compile writes what `onnx-prepack compile` writes: the same entries, and a
 * session on it gives the compiled model's outputs bitwise, every weight a hit. */
static void test_compile(const char* plain_path, const char* compiled_path, const float* x) {
  char dst[1200];
  path_of(dst, sizeof dst, "mlp.capi-compiled.onnx");
  const char* targets[] = {"x86_64-avx2-fma", "x86_64-avx512f"};
  op_compile_options co = op_compile_options_default();
  co.targets = targets;
  co.n_targets = 2;
  co.no_memo = 1;
  int packed = 0;
  co.progress = count_progress;
  co.progress_user = &packed;
  op_compile_summary summary;
  CHECK_OK(op_compile(plain_path, dst, &co, &summary));
  CHECK(summary.entries == 2 * kLayers);
  CHECK(summary.weights == kLayers);
  CHECK(summary.n_targets == 2);
  CHECK(packed == 2 * kLayers);

  op_model* ours = NULL;
  op_model* cli = NULL;
  CHECK_OK(op_model_open(dst, &ours));
  CHECK_OK(op_model_open(compiled_path, &cli));
  if (ours != NULL && cli != NULL) {
    op_model_counts a, b;
    CHECK_OK(op_model_get_counts(ours, &a));
    CHECK_OK(op_model_get_counts(cli, &b));
    CHECK(a.compiled_tensors == b.compiled_tensors && a.devices == b.devices &&
          a.struct_types == b.struct_types);
  }
  op_model_free(ours);
  op_model_free(cli);

  static float y_ours[kBatch * kWidth], y_cli[kBatch * kWidth];
  op_session_options so = op_session_options_default();
  CHECK(run_session(dst, &so, x, y_ours, NULL) == kLayers);
  CHECK(run_session(compiled_path, &so, x, y_cli, NULL) == kLayers);
  CHECK(memcmp(y_ours, y_cli, sizeof y_ours) == 0);

  /* errors: an unknown target and digest are refused with the name in the message */
  const char* bad[] = {"vax"};
  co.targets = bad;
  co.n_targets = 1;
  CHECK(op_compile(plain_path, dst, &co, NULL) == OP_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(op_last_error_message(), "vax") != NULL);
  co = op_compile_options_default();
  co.digest = "md5";
  CHECK(op_compile(plain_path, dst, &co, NULL) == OP_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(op_last_error_message(), "md5") != NULL);
  CHECK(op_compile(NULL, dst, NULL, NULL) == OP_STATUS_INVALID_ARGUMENT);
}

static void test_session(const char* plain_path, const char* compiled_path, const float* x,
                         const char* cli_npy) {
  static float y_plain[kBatch * kWidth], y_compiled[kBatch * kWidth], y_cached[kBatch * kWidth];
  op_session_options so = op_session_options_default();
  so.n_threads = 2;
  CHECK(run_session(plain_path, &so, x, y_plain, "not_found") == 0);
  CHECK(run_session(compiled_path, &so, x, y_compiled, NULL) == kLayers);
  CHECK(memcmp(y_plain, y_compiled, sizeof y_plain) == 0);

  /* write-back through the session: the first run stores, the second hits */
  char cache[1200];
  path_of(cache, sizeof cache, "session-cache");
  so.cache_dir = cache;
  CHECK(run_session(plain_path, &so, x, y_cached, NULL) == 0);
  CHECK(run_session(plain_path, &so, x, y_cached, NULL) == kLayers);
  CHECK(memcmp(y_plain, y_cached, sizeof y_plain) == 0);

  size_t size = 0, data_size = 0;
  char* file = read_all(cli_npy, &size);
  CHECK(file != NULL);
  if (file != NULL) {
    const char* data = npy_data(file, size, &data_size);
    CHECK(data != NULL && data_size == sizeof y_plain);
    if (data != NULL && data_size == sizeof y_plain) CHECK(memcmp(data, y_plain, data_size) == 0);
    free(file);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: c_api_test ONNX_PREPACK_CLI WORK_DIR\n");
    return 2;
  }
  snprintf(g_cli, sizeof g_cli, "%s", argv[1]);
  snprintf(g_dir, sizeof g_dir, "%s", argv[2]);
  CHECK(op_version() == ((OP_VERSION_MAJOR << 16) | (OP_VERSION_MINOR << 8) | OP_VERSION_PATCH));
  CHECK(strcmp(op_runtime_name(), "onnx-prepack") == 0);
  CHECK(strcmp(op_packing_abi_version(), "1") == 0);

  char cmd[4096], plain[1200], compiled[1200], digest[1200], xnpy[1200], outdir[1200], ynpy[1300];
  path_of(plain, sizeof plain, "mlp.onnx");
  path_of(compiled, sizeof compiled, "mlp.compiled.onnx");
  path_of(digest, sizeof digest, "digest.json");
  path_of(xnpy, sizeof xnpy, "x.npy");
  path_of(outdir, sizeof outdir, "cli-out");
  snprintf(ynpy, sizeof ynpy, "%s/y.npy", outdir);
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
  if (system(cmd) != 0) return 2;
  snprintf(cmd, sizeof cmd, "generate mlp -o '%s' --layers %d --width %d --external > /dev/null",
           plain, kLayers, kWidth);
  if (run_cli(cmd) != 0) return 2;
  snprintf(cmd, sizeof cmd,
           "compile '%s' -o '%s' --target x86_64-avx2-fma --target x86_64-avx512f > /dev/null",
           plain, compiled);
  if (run_cli(cmd) != 0) return 2;
  snprintf(cmd, sizeof cmd, "digest '%s' --json > '%s'", plain, digest);
  if (run_cli(cmd) != 0) return 2;

  static float x[kBatch * kWidth];
  for (int i = 0; i < kBatch * kWidth; ++i) x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  write_input_npy(xnpy, x);
  snprintf(cmd, sizeof cmd, "run '%s' --input x='%s' --output-dir '%s' --threads 2 > /dev/null",
           compiled, xnpy, outdir);
  if (run_cli(cmd) != 0) return 2;

  char* json = read_all(digest, NULL);
  if (json == NULL) return 2;
  test_errors();
  test_model(plain, compiled, json);
  test_session(plain, compiled, x, ynpy);
  test_compile(plain, compiled, x);
  free(json);
  if (g_failures > 0) {
    fprintf(stderr, "c_api_test: %d checks failed\n", g_failures);
    return 1;
  }
  printf("c_api_test: all checks passed\n");
  return 0;
}
