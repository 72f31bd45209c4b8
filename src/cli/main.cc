#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "cli/commands.h"
#include "format/model.h"

namespace {

struct Command {
  const char* name;
  int (*fn)(int, char**);
  const char* summary;
};

constexpr Command kCommands[] = {
    {"inspect", onnx_prepack::cli::cmd_inspect, "summarise a model and its compiled tensors"},
    {"check", onnx_prepack::cli::cmd_check, "validate struct types and compiled tensors"},
    {"digest", onnx_prepack::cli::cmd_digest, "canonical digests of the initializers"},
    {"explain", onnx_prepack::cli::cmd_explain,
     "which compiled entries this host would use, and why"},
    {"compile", onnx_prepack::cli::cmd_compile, "pack eligible weights into compiled tensors"},
    {"run", onnx_prepack::cli::cmd_run, "run a model with cache-aware weight preparation"},
    {"generate", onnx_prepack::cli::cmd_generate, "write a deterministic MLP or transformer model"},
};

void usage(FILE* out) {
  std::fprintf(out, "usage: onnx-prepack <command> [options]\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-9s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'onnx-prepack <command> --help' describes a command; see docs/cli.md.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(stdout);
    return 0;
  }
  if (name == "--version") {
    std::printf("onnx-prepack 0.1.0\n");
    return 0;
  }
  // A global option, for every command: follow symbolic links out of the
  // model's folder for external data (docs/cli.md, "External data").
  int kept = 2;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--allow-external-links") == 0) {
      onnx_prepack::format::set_allow_external_links_outside(true);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  for (const auto& c : kCommands) {
    if (name != c.name) continue;
    // Sizes from models and options are checked before allocating; this is the
    // last line, so that nothing ever ends in an uncaught exception (abort).
    try {
      return c.fn(argc - 2, argv + 2);
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "onnx-prepack %s: out of memory\n", c.name);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "onnx-prepack %s: internal error: %s\n", c.name, e.what());
    }
    return 2;
  }
  std::fprintf(stderr, "onnx-prepack: unknown command '%s'\n", name.c_str());
  usage(stderr);
  return 2;
}
