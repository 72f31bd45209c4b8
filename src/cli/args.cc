#include "cli/args.h"

#include <charconv>
#include <cstdio>

namespace onnx_prepack::cli {

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
  }
  return kExitFailure;
}

int report_error(const std::string& command, const Status& s) {
  std::fprintf(stderr, "onnx-prepack %s: %s\n", command.c_str(), s.message().c_str());
  return exit_code_for(s);
}

}  // namespace onnx_prepack::cli
