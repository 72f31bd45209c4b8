/* The C API tests' checks (tests/capi/c_api_test.c, c_api_generator_c.c): a
 * failed check prints its place and is counted in g_failures, which each
 * program's main returns; the run goes on, so one run lists every failure. */
#ifndef ONNX_PREPACK_TESTS_CAPI_C_CHECK_H
#define ONNX_PREPACK_TESTS_CAPI_C_CHECK_H

#include <stdio.h>

#include "onnx_prepack/c_api.h"

static int g_failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                            \
    }                                                                          \
  } while (0)

/* The call returns OP_STATUS_OK; otherwise its code's name and the message. */
#define CHECK_OK(call)                                                          \
  do {                                                                          \
    op_status_code rc_ = (call);                                                \
    if (rc_ != OP_STATUS_OK) {                                                  \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call, \
              op_status_code_name(rc_), op_last_error_message());               \
      ++g_failures;                                                             \
    }                                                                           \
  } while (0)

#endif
