/* onnx-prepack C API: opaque handles, sized integers, a status code from every
 * call and no exception across the boundary. Compiles as C99 and as C++.
 *
 *   op_model     a parsed ONNX model (external data mapped on demand)
 *   op_resolver  the loading rules (format.md §4.3) for a runtime with its own kernels:
 *                it asks for a source initializer in the formats it reads and
 *                gets a mapped payload (hit) or a miss reason
 *   op_session   our CPU runtime on one model, weights through the resolver
 *   op_generator token generation (the KV-cache loop) on a session of a decoder
 *
 * Errors: every function returning op_status_code sets a thread-local message,
 * read with op_last_error_message() (empty after a call that succeeded).
 * Ownership and lifetimes are listed in docs/c-api.md; in short: strings and
 * arrays a getter returns are borrowed from the handle they came from, and
 * stay valid until that handle is freed or, where noted, until the next call
 * that refreshes them (op_model_check, op_session_run). A handle may be used
 * from one thread at a time; different handles are independent. */
#ifndef ONNX_PREPACK_C_API_H_
#define ONNX_PREPACK_C_API_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define OP_API __attribute__((visibility("default")))
#else
#define OP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define OP_VERSION_MAJOR 0
#define OP_VERSION_MINOR 1
#define OP_VERSION_PATCH 0

/* ---- status ------------------------------------------------------------- */

/* Enumerations are passed and stored as int32_t (struct fields, arguments), so
 * the layout does not depend on the compiler's enum size and an out-of-range
 * value from a caller is an INVALID_ARGUMENT, not undefined behaviour. */

/* Mirrors onnx_prepack::StatusCode. */
typedef enum op_status_code {
  OP_STATUS_OK = 0,
  OP_STATUS_INVALID_ARGUMENT = 1,   /* the caller's request is malformed (null argument too) */
  OP_STATUS_NOT_FOUND = 2,          /* a named object does not exist */
  OP_STATUS_OUT_OF_RANGE = 3,       /* an index past an end */
  OP_STATUS_DATA_LOSS = 4,          /* corrupt or truncated input */
  OP_STATUS_UNIMPLEMENTED = 5,      /* valid but not supported by this build */
  OP_STATUS_RESOURCE_EXHAUSTED = 6, /* a limit was hit, or memory ran out */
  OP_STATUS_IO_ERROR = 7,           /* the operating system refused */
  OP_STATUS_INTERNAL = 8,           /* a bug of ours */
  OP_STATUS_DEADLINE_EXCEEDED = 9,  /* a run passed its deadline (op_run_options) */
  OP_STATUS_CANCELLED = 10          /* a run was stopped by op_run_options_set_terminate */
} op_status_code;

/* "ok", "invalid_argument", ...; "unknown" for other values. Static storage. */
OP_API const char* op_status_code_name(int32_t code);
/* Message of the last call on this thread that returned an error, "" after a
 * call that succeeded. Valid until the next API call on this thread. */
OP_API const char* op_last_error_message(void);
/* Code of that call (OP_STATUS_OK after a success). */
OP_API op_status_code op_last_error_code(void);

/* ---- version ------------------------------------------------------------ */

/* (major << 16) | (minor << 8) | patch of the library actually loaded. */
OP_API uint32_t op_version(void);
OP_API const char* op_version_string(void); /* "0.1.0" */
/* DeviceProto.runtime / runtime_version of the entries this library writes:
 * "onnx-prepack" and the packing ABI version ("1"). */
OP_API const char* op_runtime_name(void);
OP_API const char* op_packing_abi_version(void);

/* ---- element types (ONNX TensorProto.DataType values) -------------------- */

enum {
  OP_DTYPE_FLOAT = 1,
  OP_DTYPE_UINT8 = 2,
  OP_DTYPE_INT8 = 3,
  OP_DTYPE_INT32 = 6,
  OP_DTYPE_INT64 = 7,
  OP_DTYPE_BOOL = 9,
  OP_DTYPE_FLOAT16 = 10,
  OP_DTYPE_DOUBLE = 11
};

/* ---- model -------------------------------------------------------------- */

typedef struct op_model op_model;

/* Reads and parses `path`; external data is resolved next to it. */
OP_API op_status_code op_model_open(const char* path, op_model** out);
OP_API void op_model_free(op_model* model); /* NULL is ignored */

typedef struct op_model_counts {
  uint64_t initializers;     /* top-level graph initializers */
  uint64_t nodes;            /* top-level graph nodes */
  uint64_t inputs;           /* graph inputs (initializers listed as inputs included) */
  uint64_t outputs;          /* graph outputs */
  uint64_t compiled_tensors; /* ModelProto.compiled_tensors */
  uint64_t struct_types;     /* ModelProto.struct_types */
  uint64_t devices;          /* ModelProto.devices */
  int64_t ir_version;
  int64_t opset; /* default-domain opset import, 0 when absent */
} op_model_counts;

OP_API op_status_code op_model_get_counts(const op_model* model, op_model_counts* out);
/* Name of initializers[index]; borrowed from the model. */
OP_API op_status_code op_model_initializer_name(const op_model* model, uint64_t index,
                                                const char** out);

/* ---- check (format.md §4.1, 4.2) ---------------------------------------- */

/* Runs the structural checker (external payloads included) and keeps the
 * report on the model; the diagnostics getters below read it. A model with
 * errors is not a failed call: the code is OP_STATUS_OK and *n_errors > 0. */
OP_API op_status_code op_model_check(op_model* model, uint64_t* n_errors, uint64_t* n_warnings);

typedef enum op_diagnostic_kind {
  OP_DIAGNOSTIC_ERROR = 0,
  OP_DIAGNOSTIC_WARNING = 1
} op_diagnostic_kind;

typedef struct op_diagnostic {
  const char* rule;    /* stable id, e.g. "struct.size_mismatch" (docs/cli.md, check) */
  const char* path;    /* "compiled_tensors[3].value.struct_type..." */
  const char* message; /* names the objects and the numbers */
} op_diagnostic;

/* Diagnostic `index` of the last op_model_check; strings valid until the next
 * op_model_check or op_model_free. OP_STATUS_OUT_OF_RANGE past the end,
 * OP_STATUS_INVALID_ARGUMENT when the model was never checked. */
OP_API op_status_code op_model_check_diagnostic(const op_model* model, int32_t kind, uint64_t index,
                                                op_diagnostic* out);

/* ---- digest (format.md §5) ---------------------------------------------- */

/* Canonical digest of the top-level initializer `initializer_name` with
 * `algorithm` ("blake3" or "sha256") into out32[0..31]. n_threads: 0 = the
 * process-wide pool (all cores), N = a pool of N threads for this call. The digest never
 * depends on n_threads. NOT_FOUND when no such initializer, INVALID_ARGUMENT
 * for several of that name or an unknown algorithm, DATA_LOSS when its data
 * does not match its dims. */
OP_API op_status_code op_tensor_digest(const op_model* model, const char* initializer_name,
                                       const char* algorithm, uint32_t n_threads,
                                       uint8_t out32[32]);

/* ---- resolver (format.md §4.3, 6, 7) ------------------------------------ */

typedef enum op_verify_policy {
  OP_VERIFY_FULL = 0, /* hash every source that has a candidate entry */
  OP_VERIFY_MEMO = 1, /* trust a memo record for the same file identity, else hash and record */
  OP_VERIFY_OFF = 2   /* trust source_digest; hits are reported unverified */
} op_verify_policy;

typedef enum op_cache_mode {
  OP_CACHE_OFF = 0,
  OP_CACHE_READ_ONLY = 1,
  OP_CACHE_READ_WRITE = 2
} op_cache_mode;

typedef struct op_resolver_options {
  int32_t verify;           /* op_verify_policy */
  const char* memo_dir;     /* NULL = default memo folder (docs/loading.md) */
  const char* cache_dir;    /* NULL = no cache store */
  int32_t cache_mode;       /* op_cache_mode, used when cache_dir is set */
  uint64_t cache_max_bytes; /* size bound of the store, 0 = unbounded */
  const char*
      architecture; /* NULL = the detected host; else pretend this host ("x86_64-avx2-fma") */
  const char* runtime_name;      /* NULL = "onnx-prepack"; matched against DeviceProto.runtime */
  const char* runtime_version;   /* NULL = our packing ABI version */
  uint32_t n_threads;            /* pool for hashing: 0 = all cores, N = N threads */
  const char* const* fed_inputs; /* graph inputs fed in this run (initializers overridden) */
  size_t n_fed_inputs;
} op_resolver_options;

/* verify FULL, no cache (mode READ_WRITE, 4 GiB if a cache_dir is set), the
 * detected host, our runtime identity, all cores (n_threads 0). */
OP_API op_resolver_options op_resolver_options_default(void);

/* Optional dims check of one acceptable format: return 0 to accept the entry,
 * nonzero to reject it (a `format_mismatch` miss; write a reason into
 * message[0..message_size-1], NUL-terminated, if you like). */
typedef int (*op_check_dims_fn)(void* user_data, int32_t source_type, const int64_t* source_dims,
                                size_t source_rank, const uint64_t* entry_dims, size_t n_entry_dims,
                                char* message, size_t message_size);

/* One physical format the caller's kernel reads. */
typedef struct op_acceptable_format {
  const char* name;                  /* StructTypeProto.name, matched exactly */
  const char* format_version;        /* metadata_props["format_version"], matched exactly */
  const char* required_architecture; /* ISA the kernel needs; NULL or "" = none */
  op_check_dims_fn check_dims;       /* NULL = accept any dims */
  void* user_data;                   /* passed to check_dims */
} op_acceptable_format;

typedef struct op_resolution {
  int32_t hit;            /* 1 hit, 0 miss */
  const char* reason;     /* miss reason id ("stale_digest", ...), "" on a hit */
  const char* detail;     /* miss message, or where the hit came from */
  int32_t entry;          /* hit: index in compiled_tensors, -1 = cache store; miss: -1 */
  int32_t format_index;   /* hit: index into the caller's formats; miss: -1 */
  const uint8_t* payload; /* hit: the packed bytes, borrowed (see below); miss: NULL */
  uint64_t payload_size;
  int32_t payload_external; /* 1: mapped from a file, 0: inline in the model */
  const uint64_t* dims;     /* hit: StructProto.dims */
  size_t n_dims;
  int32_t verified;       /* the source digest was checked */
  int32_t memo_used;      /* a memo record replaced hashing */
  uint64_t bytes_hashed;  /* canonical source bytes hashed for this request */
  uint64_t bytes_to_pack; /* miss: source bytes the caller must pack */
  uint64_t n_candidates;  /* entries considered (model entries, then the cache store) */
} op_resolution;

typedef struct op_resolver op_resolver;

/* A resolver for one load of `model`. It shares the model: op_model_free may
 * be called before op_resolver_free. */
OP_API op_status_code op_resolver_create(op_model* model, const op_resolver_options* options,
                                         op_resolver** out);
OP_API void op_resolver_free(op_resolver* resolver);

/* Applies the loading rules to `source_name` with the caller's formats, best
 * first. A miss is not an error (OP_STATUS_OK with out->hit == 0). Everything
 * *out points to (payload, dims, strings) is owned by the resolver and stays
 * valid until op_resolver_free, across later op_resolve calls. The payload is
 * read-only (a private mapping or the parsed model). */
OP_API op_status_code op_resolve(op_resolver* resolver, const char* source_name,
                                 const op_acceptable_format* formats, size_t n_formats,
                                 op_resolution* out);

/* Write-back after the caller packed `source_name` itself on a miss: publishes
 * the pack to the resolver's cache store (read-write mode; a no-op returning
 * OK otherwise). `type_proto` is the serialized onnx.StructTypeProto of the
 * format; NULL means one of this library's formats, looked up by
 * format->name: the type, dims and payload size must be those of the pack of
 * `source_name` as the first node reading it packs it (a pack that reads
 * other initializers too, such as MatMulNBits scales, is keyed by them). */
OP_API op_status_code op_resolver_store(op_resolver* resolver, const char* source_name,
                                        const op_acceptable_format* format,
                                        const uint8_t* type_proto, size_t type_proto_size,
                                        const uint64_t* dims, size_t n_dims, const void* payload,
                                        uint64_t payload_size);

typedef struct op_resolver_totals {
  uint64_t hits, misses, memo_hits;
  uint64_t bytes_hashed, bytes_mapped, bytes_to_pack;
} op_resolver_totals;
OP_API op_status_code op_resolver_get_totals(const op_resolver* resolver, op_resolver_totals* out);

/* This library's GEMM B formats that read a B of `layout` (0 = [K, N] as
 * MatMul B, 1 = [N, K] as Gemm transB=1) and `source_type` (OP_DTYPE_FLOAT or
 * OP_DTYPE_FLOAT16), best first, limited to those whose kernel runs natively on
 * this host (host_only != 0) or all. Writes up to `capacity` formats (strings
 * and user_data static) and the total count into *n_total. */
OP_API op_status_code op_builtin_formats(uint32_t layout, int32_t source_type, int32_t host_only,
                                         op_acceptable_format* out, size_t capacity,
                                         size_t* n_total);

/* This library's formats for initializer `source_name` of `model` as the node
 * named `consumer` reads it (its op type when unnamed; NULL: the first node
 * that reads it as a weight), for every kind of packed weight (GEMM B, Conv
 * and ConvTranspose filters, MatMulNBits, ...): every format the library's
 * kernels read at this host's level (host_only != 0) or at any level, best
 * first, each with its family's dims check. Writes up to `capacity` formats
 * and the total count into *n_total; the records stay valid until
 * op_model_free. OP_STATUS_NOT_FOUND when no node reads the initializer as a
 * weight this library packs. */
OP_API op_status_code op_weight_formats(op_model* model, const char* source_name,
                                        const char* consumer, int32_t host_only,
                                        op_acceptable_format* out, size_t capacity,
                                        size_t* n_total);

/* ---- compile (`onnx-prepack compile`) ------------------------------------ */

typedef struct op_compile_options {
  const char* const* targets; /* "host" or an architecture with a packed format; NULL = host */
  size_t n_targets;
  const char* digest; /* "blake3" (NULL) or "sha256" */
  int32_t
      lift_constants; /* 1 (the default): Constant nodes with a tensor value become initializers */
  uint32_t n_threads; /* 0 = all cores, N = a pool of N */
  int32_t no_memo;    /* 1: do not record the output's digests for OP_VERIFY_MEMO */
  const char* memo_dir; /* NULL = default memo folder */
  /* Called phase by phase, `what` naming the phase: "hashing NAME" before each
   * eligible weight use (done < total, counting the uses), "packing NAME"
   * before each payload is packed (done < total, counting the payloads), then
   * with done == total "writing tensors", "syncing", "writing model" and
   * "recording memo", and once at the end (done == total, what == "");
   * NULL = none. */
  void (*progress)(size_t done, size_t total, const char* what, void* user);
  void* progress_user;
  int32_t qdq; /* op_qdq_mode: OP_QDQ_INTEGER also packs W of weight-only QDQ units (int8 B) */
} op_compile_options;

typedef struct op_compile_summary {
  uint64_t entries;       /* compiled_tensors written */
  uint64_t weights;       /* eligible weights */
  uint64_t payload_bytes; /* packed bytes written */
  double seconds;
  uint64_t n_targets; /* architectures compiled for, deduplicated */
} op_compile_summary;

OP_API op_compile_options op_compile_options_default(void);
/* Packs every eligible weight (docs/format.md §4.7) of the model at `src_path` for each
 * target and writes `dst_path` (and its external data file), as `onnx-prepack
 * compile` does. `summary` may be NULL. INVALID_ARGUMENT for an unknown target
 * or digest, the load's code for an unreadable model, IO_ERROR when writing
 * fails. */
OP_API op_status_code op_compile(const char* src_path, const char* dst_path,
                                 const op_compile_options* options, op_compile_summary* summary);

/* ---- session (our CPU runtime) ------------------------------------------ */

typedef struct op_session_options {
  uint32_t n_threads;       /* 0 = the process-wide pool (all cores), N = a pool of N */
  int32_t verify;           /* op_verify_policy */
  const char* cache_dir;    /* NULL = no cache store */
  int32_t cache_mode;       /* op_cache_mode, used when cache_dir is set (default READ_WRITE) */
  uint64_t cache_max_bytes; /* 0 = unbounded; default 4 GiB */
  const char* memo_dir;     /* NULL = default */
  int32_t plain_weights;    /* 1: no resolver, no packing: B used in place (comparison) */
  /* Weight-only QDQ units (DequantizeLinear of a constant int8/uint8 weight
   * into MatMul/Gemm): OP_QDQ_EXACT (0, the default) computes the graph's
   * float product; OP_QDQ_INTEGER runs them on the int8 kernels with A
   * quantized on the fly (ONNX Runtime's way; changes the output). */
  int32_t qdq;
  /* 1: FLOAT16 values stay float between nodes computed in float, as ONNX Runtime's CPU
   * provider keeps them; 0 (default): every FLOAT16 output rounded, as ONNX defines */
  int32_t float16_float_chains;
} op_session_options;

typedef enum op_qdq_mode { OP_QDQ_EXACT = 0, OP_QDQ_INTEGER = 1 } op_qdq_mode;

OP_API op_session_options op_session_options_default(void);

typedef struct op_session op_session;

OP_API op_status_code op_session_create(const char* model_path, const op_session_options* options,
                                        op_session** out);
/* The same on an open model (shared; op_model_free may come first). */
OP_API op_status_code op_session_create_from_model(op_model* model,
                                                   const op_session_options* options,
                                                   op_session** out);
OP_API void op_session_free(op_session* session);

typedef struct op_value_info {
  const char* name;
  int32_t dtype;       /* OP_DTYPE_*, 0 unknown */
  const int64_t* dims; /* -1 for a symbolic dimension */
  size_t rank;
  int32_t has_shape;   /* 0: any rank accepted */
  int32_t has_default; /* an initializer provides a value when not fed */
} op_value_info;

OP_API op_status_code op_session_input_count(const op_session* session, size_t* out);
OP_API op_status_code op_session_input_info(const op_session* session, size_t index,
                                            op_value_info* out);
OP_API op_status_code op_session_output_count(const op_session* session, size_t* out);
OP_API op_status_code op_session_output_name(const op_session* session, size_t index,
                                             const char** out);

/* One fed input: `data` holds numel(dims) elements of `dtype`, C order. */
typedef struct op_input {
  const char* name;
  int32_t dtype; /* 0 means OP_DTYPE_FLOAT */
  const void* data;
  const int64_t* dims;
  size_t rank;
} op_input;

/* Runs the model. Inputs without a default must be fed. The first run (and a
 * run with other shapes) plans: every weight is resolved, mapped or packed
 * then. Outputs stay on the session until the next run. */
OP_API op_status_code op_session_run(op_session* session, const op_input* inputs, size_t n_inputs);

/* Options of one run (docs/c-api.md, "Run options"), as ONNX Runtime's
 * OrtRunOptions: a deadline and a terminate flag. One may serve several runs,
 * one after another or at once on different sessions. */
typedef struct op_run_options op_run_options;
OP_API op_status_code op_run_options_create(op_run_options** out); /* no deadline, not set */
OP_API void op_run_options_free(op_run_options* options);          /* NULL is ignored */
/* Milliseconds from the start of a run (planning included) after which it
 * stops with OP_STATUS_DEADLINE_EXCEEDED; 0 (the default) = none. Set it
 * between runs, not during one. */
OP_API op_status_code op_run_options_set_deadline_ms(op_run_options* options, uint64_t deadline_ms);
/* 1: every run using `options` stops at its next check (before each node,
 * each If/Loop/Scan body run, every few thousand steps of a long kernel) with
 * OP_STATUS_CANCELLED, and later runs fail at once until it is set back to 0.
 * The one call that may be made from any thread while a run is in progress
 * (ONNX Runtime's RunOptionsSetTerminate / UnsetTerminate). */
OP_API op_status_code op_run_options_set_terminate(op_run_options* options, int32_t terminate);
/* op_session_run with run options (NULL = none). A run stopped by them leaves
 * the session usable: the next run starts afresh, with no outputs kept. */
OP_API op_status_code op_session_run_with_options(op_session* session, const op_input* inputs,
                                                  size_t n_inputs,
                                                  const op_run_options* run_options);

/* Output `index` of the last run, borrowed until the next run or free. */
typedef struct op_tensor_view {
  const char* name;
  int32_t dtype;
  const int64_t* dims;
  size_t rank;
  const void* data;
  uint64_t nbytes;
} op_tensor_view;
OP_API op_status_code op_session_output(const op_session* session, size_t index,
                                        op_tensor_view* out);
/* Copies output `index` into a caller buffer of `capacity` bytes
 * (OP_STATUS_OUT_OF_RANGE if it is too small). */
OP_API op_status_code op_session_output_copy(const op_session* session, size_t index, void* dst,
                                             uint64_t capacity);

/* Per-weight decision, as `onnx-prepack run --json` prints it. Strings valid
 * until the next op_session_run or op_session_free. */
typedef struct op_weight_report {
  const char* name;     /* source initializer */
  const char* consumer; /* first node that asked */
  const char* decision; /* "hit" or "miss" */
  const char* reason;   /* miss reason id, "" on a hit */
  const char* detail;
  const char* format; /* format mapped or packed into */
  int32_t verified;
  int32_t stored;          /* written back to the cache store */
  const char* store_error; /* "" unless a write-back failed (never fatal) */
  uint64_t bytes_mapped, bytes_hashed, bytes_packed;
} op_weight_report;
OP_API op_status_code op_session_weight_count(const op_session* session, size_t* out);
OP_API op_status_code op_session_weight(const op_session* session, size_t index,
                                        op_weight_report* out);

/* Phase timings in milliseconds (docs/cli.md, run --json "timings_ms"). */
typedef struct op_session_timings {
  double parse;     /* op_session_create: read + protobuf (0 from an open model) */
  double resolve;   /* loading rules of the requests that hashed nothing */
  double verify;    /* loading rules of the requests that hashed source bytes */
  double map;       /* initializer views + populating the hits' page tables */
  double pack;      /* packing misses */
  double store;     /* cache write-back */
  double plan;      /* shapes, folding, kernels, arena (the rest of planning) */
  double first_run; /* first op_session_run after a plan, excluding planning */
  double last_run;  /* the most recent op_session_run, excluding planning */
  uint64_t hits, misses, stored;
  uint64_t bytes_mapped, bytes_hashed, bytes_packed;
} op_session_timings;
OP_API op_status_code op_session_get_timings(const op_session* session, op_session_timings* out);

/* ---- generator (token generation on a decoder: docs/llm.md, "Generation") -- */

/* The engine's GeneratorParams (docs/llm.md, "Parameters"). Start from
 * op_generator_params_default(). */
typedef struct op_generator_params {
  int64_t max_length;      /* with the prompt; 0: longest prompt + max_new_tokens */
  int64_t max_new_tokens;  /* tokens generated per sequence at most; 0: until max_length */
  int32_t do_sample;       /* 0 (default): greedy, the lowest id on ties; 1: sample */
  float temperature;       /* > 0 when sampling; default 1 */
  int64_t top_k;           /* > 0: sample among the k most likely; 0 (default): all */
  float top_p;             /* in (0, 1]; default 1 */
  uint64_t seed;           /* the sampler's seed: the same seed, the same tokens */
  const int64_t* stop_ids; /* a sequence emitting one is done; copied by op_generator_create */
  uint64_t n_stop_ids;     /* stop_ids may be NULL when 0 */
  int64_t pad_token_id;    /* fills shorter prompts and finished sequences' steps; default 0 */
} op_generator_params;

OP_API op_generator_params op_generator_params_default(void);

/* The KV-cache loop of one generation on a session's engine. The session must
 * outlive the generator and is used by it alone while it generates (no
 * op_session_run and no second generator stepping on it meanwhile). */
typedef struct op_generator op_generator;

/* Recognises the decoder form of the session's model (genai or optimum) and
 * checks `params` (NULL = the defaults, which set neither max_length nor
 * max_new_tokens: an INVALID_ARGUMENT). INVALID_ARGUMENT naming the parameter or
 * the missing input otherwise; RESOURCE_EXHAUSTED for a KV cache past the budget. */
OP_API op_status_code op_generator_create(op_session* session, const op_generator_params* params,
                                          op_generator** out);
/* The prompt: `rows` sequences, row r holding row_lengths[r] ids, concatenated in
 * `ids`. Runs the prompt step and chooses each sequence's first new token. A later
 * call (rows == 1) appends tokens to the sequence. INVALID_ARGUMENT for no rows, an
 * empty row, an id outside [0, vocabulary). */
OP_API op_status_code op_generator_append_tokens(op_generator* generator, const int64_t* ids,
                                                 const uint64_t* row_lengths, uint64_t rows);
/* One decode step (INVALID_ARGUMENT before append_tokens or when done). */
OP_API op_status_code op_generator_generate_next_token(op_generator* generator);
/* *out = 1 when every sequence is done (0 before the prompt). */
OP_API op_status_code op_generator_is_done(const op_generator* generator, int* out);
/* The token each sequence chose in the last step (batch-size values). *count is
 * set to the batch size even when `capacity` is short, which returns
 * OUT_OF_RANGE (call with capacity 0 to size the buffer). */
OP_API op_status_code op_generator_get_next_tokens(const op_generator* generator, int64_t* out,
                                                   uint64_t capacity, uint64_t* count);
/* Prompt and generated ids of sequence `index`, padding excluded; *count as above
 * (OUT_OF_RANGE also for an index past the batch). */
OP_API op_status_code op_generator_get_sequence(const op_generator* generator, uint64_t index,
                                                int64_t* out, uint64_t capacity, uint64_t* count);

/* What the generation took so far, in milliseconds of wall time. */
typedef struct op_generation_stats {
  double first_token_ms;           /* the prompt step: planning, the run, the choice */
  double decode_ms;                /* every step after the prompt step */
  double decode_tokens_per_second; /* decode steps per second; 0 before the second step */
  double plan_ms;                  /* planning, included in the times above */
  uint64_t prompt_tokens;          /* over the batch, padding excluded */
  uint64_t decode_steps;
  uint64_t new_tokens; /* generated over the batch, the prompt step's included */
} op_generation_stats;
OP_API op_status_code op_generator_get_stats(const op_generator* generator,
                                             op_generation_stats* out);
OP_API void op_generator_free(op_generator* generator); /* NULL is ignored */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ONNX_PREPACK_C_API_H_ */
