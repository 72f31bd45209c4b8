// Minimal command-line parsing shared by the subcommands: positionals,
// `--flag`, `--key VALUE` / `--key=VALUE`, repeatable keys.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx_prepack/status.h"

namespace onnx_prepack::cli {

struct CommandSpec;

// Exit codes (docs/cli.md): 0 success, 1 the command ran and found problems,
// 2 usage error or unreadable input, 3 internal or I/O failure, 4 a run stopped
// at its deadline.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitFailure = 3;
inline constexpr int kExitDeadline = 4;  // a run passed --deadline-ms (or was cancelled)

class Args {
 public:
  // `flags` take no value; `options` take one value and may repeat.
  static Result<Args> parse(int argc, char** argv, const std::set<std::string>& flags,
                            const std::set<std::string>& options);
  // The options of `spec` (cli/spec.h), its short names (`-o`) and --help /
  // -h; an unknown option is an error that names the closest known one.
  static Result<Args> parse(int argc, char** argv, const CommandSpec& spec);

  const std::vector<std::string>& positionals() const { return positionals_; }
  bool has(const std::string& name) const;
  std::optional<std::string> get(const std::string& name) const;  // last value
  std::vector<std::string> get_all(const std::string& name) const;
  Result<long long> get_int(const std::string& name, long long fallback, long long min,
                            long long max) const;

 private:
  std::vector<std::string> positionals_;
  std::set<std::string> flags_set_;
  std::map<std::string, std::vector<std::string>> values_;
};

int exit_code_for(const Status& s);
// Prints "onnx-prepack <cmd>: <message>" to stderr and returns the exit code;
// in JSON mode also one object {"error": {...}} on stdout (docs/cli.md).
int report_error(const std::string& command, const Status& s);
// A usage error: the message, then the synopsis and a pointer to --help on
// stderr (the JSON object on stdout in JSON mode); returns kExitUsage.
int usage_error(const CommandSpec& spec, const std::string& message);
// Prints the help of a command on stdout; returns kExitOk.
int print_help(const CommandSpec& spec);
// The start of every command that takes one MODEL operand: argv parsed
// against `spec`. Empty after --help (printed), a parse error or not exactly
// one operand (a usage error), with `exit_code` what the command returns.
std::optional<Args> parse_model_command(int argc, char** argv, const CommandSpec& spec,
                                        int& exit_code);

// JSON mode: set by main when the command line has --json, so that every
// error, the parser's too, is one JSON object on stdout.
void set_json_errors(bool on);
bool json_errors();

}  // namespace onnx_prepack::cli
