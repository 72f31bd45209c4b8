/* A C program built against an installed onnx-prepack (pkg-config or CMake's
 * find_package): it links libonnx_prepack.so, lists the library's GEMM formats
 * and gets a clear error for a missing model. Exits 0 when both hold. */
#include <onnx_prepack/c_api.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  op_acceptable_format formats[8];
  size_t n = 0;
  if (op_builtin_formats(0, OP_DTYPE_FLOAT, 0, formats, 8, &n) != OP_STATUS_OK || n == 0) {
    fprintf(stderr, "op_builtin_formats: %s\n", op_last_error_message());
    return 1;
  }
  op_model* m = NULL;
  if (op_model_open("/nonexistent/model.onnx", &m) != OP_STATUS_NOT_FOUND ||
      strstr(op_last_error_message(), "model.onnx") == NULL) {
    fprintf(stderr, "op_model_open: unexpected answer: %s\n", op_last_error_message());
    return 1;
  }
  printf("ok: %zu GEMM formats, first %s\n", n, formats[0].name);
  return 0;
}
