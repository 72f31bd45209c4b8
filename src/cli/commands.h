// Entry points of the subcommands; argv excludes the program and command name.
#pragma once

namespace onnx_prepack::cli {

int cmd_inspect(int argc, char** argv);
int cmd_digest(int argc, char** argv);
int cmd_check(int argc, char** argv);
int cmd_compile(int argc, char** argv);
int cmd_explain(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_complete(int argc, char** argv);
int cmd_ops(int argc, char** argv);

}  // namespace onnx_prepack::cli
