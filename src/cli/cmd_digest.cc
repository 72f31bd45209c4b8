// onnx-prepack digest MODEL [--algorithm blake3|sha256] [--threads N] [--json]
// One canonical tensor digest (format.md §5) per top-level initializer.
#include <cstdio>
#include <memory>
#include <string>

#include "base/json.h"
#include "base/thread_pool.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/spec.h"
#include "digest/digest.h"
#include "engine/engine_options.h"
#include "engine/model_reports.h"
#include "format/data_type.h"
#include "format/model.h"
#include "format/tensor_info.h"

namespace onnx_prepack::cli {
int cmd_digest(int argc, char** argv) {
  const CommandSpec& spec = *find_command("digest");
  int exit_code = kExitOk;
  auto args = parse_model_command(argc, argv, spec, exit_code);
  if (!args) return exit_code;
  const std::string algorithm_text = args->get("algorithm").value_or("blake3");
  const auto algorithm = digest::algorithm_from_name(algorithm_text);
  if (!algorithm) {
    return report_error("digest", invalid_argument("--algorithm '" + algorithm_text +
                                                   "' is not known, expected blake3 or sha256"));
  }
  auto threads = args->get_int("threads", kDefaultThreads, 0, kMaxThreads);
  if (!threads.ok()) return report_error("digest", threads.status());

  auto model = format::Model::load(args->positionals()[0]);
  if (!model.ok()) return report_error("digest", model.status());
  std::unique_ptr<base::ThreadPool> own_pool;  // 0 = all cores (the shared pool)
  const digest::DigestOptions options{*algorithm, engine::pool_for(uint32_t(*threads), own_pool)};

  const auto& inits = (*model)->proto().graph().initializer();
  base::Json list = base::Json::array();
  int failures = 0;
  for (int i = 0; i < inits.size(); ++i) {
    const onnx::TensorProto& t = inits[i];
    auto d = digest::digest_tensor(**model, t, format::tensor_context(i, t.name()), options);
    if (!d.ok()) {
      std::fprintf(stderr, "onnx-prepack digest: %s\n", d.status().message().c_str());
      ++failures;
      continue;
    }
    const std::string hex = base::hex_lower(d->digest.data(), d->digest.size());
    const std::string type(format::data_type_name(t.data_type()));
    if (args->has("json")) {
      list.push_back(engine::digest_json(t, *d, *algorithm));
    } else {
      std::printf("%-40s %-9s %-20s %12llu  %s\n", t.name().c_str(), type.c_str(),
                  format::dims_string(t).c_str(), (unsigned long long)d->content_bytes,
                  hex.c_str());
    }
  }
  if (args->has("json")) std::printf("%s\n", list.dump(2).c_str());
  return failures > 0 ? kExitFindings : kExitOk;
}

}  // namespace onnx_prepack::cli
