#include "cli/args.h"

#include <charconv>
#include <cstdio>

#include "base/json.h"
#include "cli/spec.h"

namespace onnx_prepack::cli {
namespace {
bool g_json_errors = false;
}  // namespace

void set_json_errors(bool on) { g_json_errors = on; }
bool json_errors() { return g_json_errors; }

Result<Args> Args::parse(int argc, char** argv, const CommandSpec& spec) {
  std::set<std::string> flags = {"help"}, options;
  std::vector<std::string> names = {"help"};
  std::vector<std::string> storage;
  storage.reserve(size_t(argc));
  for (const OptionSpec& o : spec.options) {
    (o.value.empty() ? flags : options).insert(std::string(o.name));
    names.emplace_back(o.name);
  }
  bool only_positionals = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") only_positionals = true;
    if (!only_positionals && a.size() == 2 && a[0] == '-' && a[1] != '-') {
      if (a[1] == 'h') a = "--help";
      for (const OptionSpec& o : spec.options) {
        if (o.short_name == a[1]) a = "--" + std::string(o.name);
      }
    }
    storage.push_back(std::move(a));
  }
  std::vector<char*> av;
  for (auto& a : storage) av.push_back(a.data());
  Result<Args> parsed = parse(int(av.size()), av.data(), flags, options);
  if (parsed.ok()) return parsed;
  // "unknown option '--thread'" -> "...; did you mean '--threads'?"
  const std::string& m = parsed.status().message();
  const std::string prefix = "unknown option '";
  if (m.rfind(prefix, 0) != 0) return parsed;
  std::string word = m.substr(prefix.size(), m.size() - prefix.size() - 1);
  std::string bare = word;
  while (!bare.empty() && bare[0] == '-') bare.erase(0, 1);
  if (auto eq = bare.find('='); eq != std::string::npos) bare.resize(eq);
  std::string message = "unknown option '" + word + "' for '" + std::string(spec.name) + "'";
  if (auto near = closest(bare, names)) message += "; did you mean '--" + *near + "'?";
  return invalid_argument(message);
}

Result<Args> Args::parse(int argc, char** argv, const std::set<std::string>& flags,
                         const std::set<std::string>& options) {
  Args a;
  bool only_positionals = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (only_positionals || arg.size() < 2 || arg.rfind("--", 0) != 0) {
      if (!only_positionals && arg.size() > 1 && arg[0] == '-' && arg != "-") {
        return invalid_argument("unknown option '" + arg + "'");
      }
      a.positionals_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positionals = true;
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flags.count(name)) {
      if (value) return invalid_argument("option '--" + name + "' takes no value");
      a.flags_set_.insert(name);
    } else if (options.count(name)) {
      if (!value) {
        if (i + 1 >= argc) return invalid_argument("option '--" + name + "' needs a value");
        value = argv[++i];
      }
      a.values_[name].push_back(*value);
    } else {
      return invalid_argument("unknown option '--" + name + "'");
    }
  }
  return a;
}

bool Args::has(const std::string& name) const {
  return flags_set_.count(name) > 0 || values_.count(name) > 0;
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::get_all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

Result<long long> Args::get_int(const std::string& name, long long fallback, long long min,
                                long long max) const {
  auto v = get(name);
  if (!v) return fallback;
  long long out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size()) {
    return invalid_argument("--" + name + " expects an integer, got '" + *v + "'");
  }
  if (out < min || out > max) {
    return invalid_argument("--" + name + " must be between " + std::to_string(min) + " and " +
                            std::to_string(max) + ", got " + *v);
  }
  return out;
}

int exit_code_for(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kOutOfRange:
    case StatusCode::kDataLoss:
    case StatusCode::kUnimplemented:
    case StatusCode::kResourceExhausted:
      return kExitUsage;
    case StatusCode::kIoError:  // the operating system refused a read or a write
      return kExitFailure;
    case StatusCode::kInternal:
      return kExitFailure;
    // Neither the model's fault nor the system's: the caller's bound, which a
    // script may retry with more time (docs/cli.md, exit codes).
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kCancelled:
      return kExitDeadline;
  }
  return kExitFailure;
}

int report_error(const std::string& command, const Status& s) {
  const int code = exit_code_for(s);
  std::fprintf(stderr, "onnx-prepack%s%s: %s\n", command.empty() ? "" : " ", command.c_str(),
               s.message().c_str());
  if (g_json_errors) {
    base::Json e = base::Json::object();
    e["code"] = std::string(status_code_name(s.code()));
    e["exit_code"] = code;
    e["message"] = s.message();
    e["command"] = command.empty() ? base::Json() : base::Json(command);
    base::Json j = base::Json::object();
    j["error"] = std::move(e);
    std::printf("%s\n", j.dump(2).c_str());
    std::fflush(stdout);
  }
  return code;
}

int usage_error(const CommandSpec& spec, const std::string& message) {
  const int code = report_error(std::string(spec.name), invalid_argument(message));
  std::fprintf(stderr, "%sTry 'onnx-prepack %s --help'.\n", synopsis(spec).c_str(),
               std::string(spec.name).c_str());
  return code;
}

int print_help(const CommandSpec& spec) {
  std::fputs(help_text(spec).c_str(), stdout);
  return kExitOk;
}

std::optional<Args> parse_model_command(int argc, char** argv, const CommandSpec& spec,
                                        int& exit_code) {
  auto args = Args::parse(argc, argv, spec);
  if (!args.ok()) {
    exit_code = usage_error(spec, args.status().message());
    return std::nullopt;
  }
  if (args->has("help")) {
    exit_code = print_help(spec);
    return std::nullopt;
  }
  if (args->positionals().size() != 1) {
    exit_code = usage_error(spec, "expected one MODEL, got " +
                                      std::to_string(args->positionals().size()) + " operands");
    return std::nullopt;
  }
  exit_code = kExitOk;
  return std::move(*args);
}

}  // namespace onnx_prepack::cli
