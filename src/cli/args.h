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

// Exit codes (docs/cli.md): 0 success, 1 the command ran and found problems,
// 2 usage error or unreadable input, 3 internal or I/O failure.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitFailure = 3;

class Args {
 public:
  // `flags` take no value; `options` take one value and may repeat.
  static Result<Args> parse(int argc, char** argv, const std::set<std::string>& flags,
                            const std::set<std::string>& options);

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
// Prints "onnx-prepack <cmd>: <message>" to stderr and returns the exit code.
int report_error(const std::string& command, const Status& s);

}  // namespace onnx_prepack::cli
