#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/spec.h"
#include "format/model.h"
#include "runtime/activity.h"

namespace {

using onnx_prepack::cli::CommandSpec;

struct Command {
  const char* name;
  int (*fn)(int, char**);
};

// The entry point of each command of cli/spec.cc (same names).
constexpr Command kCommands[] = {
    {"inspect", onnx_prepack::cli::cmd_inspect},   {"check", onnx_prepack::cli::cmd_check},
    {"digest", onnx_prepack::cli::cmd_digest},     {"explain", onnx_prepack::cli::cmd_explain},
    {"compile", onnx_prepack::cli::cmd_compile},   {"run", onnx_prepack::cli::cmd_run},
    {"complete", onnx_prepack::cli::cmd_complete}, {"generate", onnx_prepack::cli::cmd_generate},
    {"ops", onnx_prepack::cli::cmd_ops},
};

std::vector<std::string> command_names() {
  std::vector<std::string> names = {"help"};
  for (const CommandSpec& c : onnx_prepack::cli::command_specs()) names.emplace_back(c.name);
  return names;
}

// "unknown command 'complie'; did you mean 'compile'?" (exit 2).
int unknown_command(const std::string& name) {
  std::string message = "unknown command '" + name + "'";
  if (auto near = onnx_prepack::cli::closest(name, command_names())) {
    message += "; did you mean '" + *near + "'?";
  }
  const int code = onnx_prepack::cli::report_error("", onnx_prepack::invalid_argument(message));
  std::fprintf(stderr, "Try 'onnx-prepack --help'.\n");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = onnx_prepack::cli;
  // JSON mode (docs/cli.md, "Errors under --json"): any error, the parser's
  // and main's too, is one JSON object on stdout.
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) break;
    if (std::strcmp(argv[i], "--json") == 0) cli::set_json_errors(true);
  }
  if (argc < 2) {
    std::fputs(cli::main_help().c_str(), stderr);
    return cli::report_error("", onnx_prepack::invalid_argument("no command given"));
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || (name == "help" && argc == 2)) {
    std::fputs(cli::main_help().c_str(), stdout);
    return cli::kExitOk;
  }
  if (name == "help") {  // help COMMAND
    const CommandSpec* c = cli::find_command(argv[2]);
    if (c == nullptr) return unknown_command(argv[2]);
    return cli::print_help(*c);
  }
  if (name == "--version") {
    std::printf("onnx-prepack 0.1.0\n");
    return cli::kExitOk;
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
      // What was being done (the node being planned or run) and the budget.
      std::string what = "out of memory";
      try {
        what = onnx_prepack::runtime::out_of_memory_message();
      } catch (...) {  // the message does not fit either: the bare words
      }
      return cli::report_error(c.name, onnx_prepack::resource_exhausted(what));
    } catch (const std::length_error& e) {  // a size past what can be allocated
      return cli::report_error(c.name, onnx_prepack::resource_exhausted(
                                           std::string("size past the limits: ") + e.what()));
    } catch (const std::exception& e) {
      return cli::report_error(
          c.name, onnx_prepack::internal_error(std::string("internal error: ") + e.what()));
    }
  }
  return unknown_command(name);
}
