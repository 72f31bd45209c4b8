// onnx-prepack compile MODEL -o OUT [--target host|ARCH]... [--digest blake3|sha256]
//                      [--no-lift-constants] [--threads N] [--memo-dir DIR] [--no-memo] [--json]
// Packs every eligible MatMul/Gemm B for each target and writes OUT with
// devices, struct_types and compiled_tensors (docs/cli.md, "compile"); the
// pipeline is onnx_prepack::compile_model (src/engine/compile.cc).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "base/json.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/spec.h"
#include "engine/report_json.h"
#include "onnx_prepack/engine.hpp"

namespace onnx_prepack::cli {
namespace {

// How progress is shown: a bar redrawn in place on a terminal, one line per
// report with ONNX_PREPACK_PROGRESS=lines (for logs and tests), else nothing.
enum class ProgressMode { kNone, kBar, kLines };

ProgressMode progress_mode() {
  const char* env = std::getenv("ONNX_PREPACK_PROGRESS");
  if (env != nullptr && std::strcmp(env, "lines") == 0) return ProgressMode::kLines;
  if (env != nullptr && std::strcmp(env, "off") == 0) return ProgressMode::kNone;
  return isatty(fileno(stderr)) ? ProgressMode::kBar : ProgressMode::kNone;
}

bool g_bar_open = false;  // a bar is drawn and its line not ended

// `what` names the phase: "hashing NAME", "packing NAME", "writing tensors",
// "syncing", "writing model", "recording memo"; "" ends the report.
void progress(size_t done, size_t total, const std::string& what) {
  static const ProgressMode mode = progress_mode();
  if (mode == ProgressMode::kNone) return;
  if (mode == ProgressMode::kLines) {
    if (!what.empty()) std::fprintf(stderr, "progress %zu/%zu %s\n", done, total, what.c_str());
    return;
  }
  if (what.empty()) {
    if (g_bar_open) std::fputc('\n', stderr);
    g_bar_open = false;
    std::fflush(stderr);
    return;
  }
  constexpr int kWidth = 30;
  const int fill = total == 0 ? kWidth : int(kWidth * done / total);
  std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu %-48.48s", fill, "##############################",
               kWidth - fill, "", done, total, what.c_str());
  g_bar_open = true;
  std::fflush(stderr);
}

void end_progress() { progress(0, 0, ""); }

// "files" of compile --json: the model and the data file written.
base::Json files_json(const CompileSummary& s) {
  base::Json files = base::Json::array();
  auto add = [&](const std::string& path, const char* role) {
    std::error_code ec;
    const uintmax_t bytes = std::filesystem::file_size(path, ec);
    base::Json f = base::Json::object();
    f["path"] = path;
    f["bytes"] = ec ? base::Json() : base::Json(uint64_t(bytes));
    f["role"] = role;
    files.push_back(std::move(f));
  };
  add(s.output, "model");
  if (!s.data_file.empty()) {
    const std::filesystem::path dir = std::filesystem::path(s.output).parent_path();
    add(dir.empty() ? s.data_file : (dir / s.data_file).string(), "data");
  }
  return files;
}

}  // namespace

int cmd_compile(int argc, char** argv) {
  const CommandSpec& spec = *find_command("compile");
  int exit_code = kExitOk;
  auto args = parse_model_command(argc, argv, spec, exit_code);
  if (!args) return exit_code;
  if (!args->get("output")) return usage_error(spec, "-o OUT is required");
  auto threads = args->get_int("threads", kDefaultThreads, 0, kMaxThreads);
  if (!threads.ok()) return report_error("compile", threads.status());
  CompileOptions options;
  options.digest = args->get("digest").value_or("blake3");
  options.targets = args->get_all("target");
  if (options.targets.empty()) options.targets.push_back("host");
  // Constant-node weights are lifted by default; --lift-constants is still
  // accepted (it was the opt-in before 2026-12).
  options.lift_constants = !args->has("no-lift-constants");
  options.threads = uint32_t(*threads);
  options.memo = !args->has("no-memo");
  options.reference_source_data = args->has("reference-source-data");
  options.memo_dir = args->get("memo-dir").value_or("");
  const std::string qdq(args->get("qdq").value_or(std::string(qdq_mode_name(options.qdq))));
  std::optional<QdqMode> qdq_mode = qdq_mode_from_name(qdq);
  if (!qdq_mode) {
    return usage_error(spec, "--qdq must be exact or integer, got '" + qdq + "'");
  }
  options.qdq = *qdq_mode;
  options.progress = progress;
  auto summary = compile_model(args->positionals()[0], *args->get("output"), options);
  end_progress();
  if (!summary.ok()) return report_error("compile", summary.status());
  if (!summary->memo_error.empty()) {
    std::fprintf(stderr, "onnx-prepack compile: memo not recorded: %s\n",
                 summary->memo_error.c_str());
  }
  if (args->has("json")) {
    base::Json j = engine::compile_json(*summary);
    j["files"] = files_json(*summary);
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("compiled %llu entries (%llu weights x %zu targets), %llu payload bytes in %.2f s",
                (unsigned long long)summary->entries, (unsigned long long)summary->weights,
                summary->targets.size(), (unsigned long long)summary->payload_bytes,
                summary->seconds);
    if (summary->lifted) std::printf(", %d Constant nodes lifted to initializers", summary->lifted);
    std::printf("\n");
    for (const SkippedWeight& w : summary->skipped) {
      std::printf("not packed: %s (%s): %s\n", w.name.c_str(), w.layout.c_str(), w.reason.c_str());
    }
    if (summary->entries == 0) {
      if (summary->constant_nodes > 0) {
        std::printf(
            "no entries: %d weights are Constant nodes kept by --no-lift-constants; "
            "compile without it to pack them\n",
            summary->constant_nodes);
      } else if (summary->weights == 0 && summary->skipped.empty()) {
        std::printf(
            "no entries: the model has no weight of a packed kind (MatMul/Gemm B, "
            "Conv/ConvTranspose filters, MatMulNBits B as initializers)\n");
      }
    }
    std::printf("wrote %s", summary->output.c_str());
    if (!summary->data_file.empty()) std::printf(" and %s", summary->data_file.c_str());
    std::printf("\n");
  }
  return kExitOk;
}

}  // namespace onnx_prepack::cli
