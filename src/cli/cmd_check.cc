// onnx-prepack check MODEL [--json]: every structural problem of a model's
// struct types, devices and compiled tensors (docs/cli.md, "check").
#include <cstdio>

#include "base/json.h"
#include "check/check.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/spec.h"
#include "engine/model_reports.h"
#include "format/model.h"

namespace onnx_prepack::cli {
int cmd_check(int argc, char** argv) {
  const CommandSpec& spec = *find_command("check");
  int exit_code = kExitOk;
  auto args = parse_model_command(argc, argv, spec, exit_code);
  if (!args) return exit_code;
  auto model = format::Model::load(args->positionals()[0]);
  // 2 when the model is missing or malformed, 3 when the system refuses the read.
  if (!model.ok()) return report_error("check", model.status());
  check::CheckReport report = check::check_model(**model);
  if (args->has("json")) {
    std::printf("%s\n", engine::check_json(report).dump(2).c_str());
  } else {
    for (const auto& d : report.errors)
      std::printf("error [%s] %s\n", d.rule.c_str(), d.message.c_str());
    for (const auto& d : report.warnings)
      std::printf("warning [%s] %s\n", d.rule.c_str(), d.message.c_str());
    std::printf("%s: %s (%zu errors, %zu warnings, %d compiled tensors)\n",
                args->positionals()[0].c_str(), report.valid() ? "valid" : "invalid",
                report.errors.size(), report.warnings.size(),
                (*model)->proto().compiled_tensors_size());
  }
  return report.valid() ? kExitOk : kExitFindings;
}

}  // namespace onnx_prepack::cli
