// onnx-prepack ops [--json]: the operators the CPU runtime builds kernels for
// (runtime::supported_ops), so tools such as tools/difffuzz read the registry
// without parsing C++ (docs/cli.md, "ops").
#include <cstdio>
#include <string>

#include "base/json.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/spec.h"
#include "runtime/kernel.h"

namespace onnx_prepack::cli {
int cmd_ops(int argc, char** argv) {
  const CommandSpec& spec = *find_command("ops");
  auto args = Args::parse(argc, argv, spec);
  if (!args.ok()) return usage_error(spec, args.status().message());
  if (args->has("help")) return print_help(spec);
  if (!args->positionals().empty()) {
    return usage_error(spec,
                       "expected no operands, got " + std::to_string(args->positionals().size()));
  }
  const std::vector<std::string> names = runtime::supported_ops();
  if (args->has("json")) {
    base::Json list = base::Json::array();
    for (const std::string& n : names) list.push_back(n);
    base::Json out = base::Json::object();
    out["operators"] = std::move(list);
    out["count"] = int64_t(names.size());
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    for (const std::string& n : names) std::printf("%s\n", n.c_str());
  }
  return kExitOk;
}

}  // namespace onnx_prepack::cli
