#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"

namespace onnx_prepack::cli {

// Placeholder until this command lands; it says so instead of pretending.
int cmd_digest(int, char**) {
  std::fprintf(stderr, "onnx-prepack digest: not implemented in this build\n");
  return kExitFailure;
}

}  // namespace onnx_prepack::cli
