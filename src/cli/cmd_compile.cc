// onnx-prepack compile MODEL -o OUT [--target host|ARCH]... [--digest blake3|sha256]
//                      [--no-lift-constants] [--threads N] [--json]
// Packs every eligible MatMul/Gemm B for each target and writes OUT with
// devices, struct_types and compiled_tensors (docs/cli.md, "compile"); the
// pipeline is onnx_prepack::compile_model (src/engine/compile.cc).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "engine/report_json.h"
#include "onnx_prepack/engine.hpp"

namespace onnx_prepack::cli {
namespace {

constexpr const char* kUsage =
    "usage: onnx-prepack compile MODEL -o OUT [--target host|ARCH]... [--digest blake3|sha256]\n"
    "                            [--no-lift-constants] [--threads N] [--memo-dir DIR] [--no-memo]\n"
    "                            [--json]\n";

void progress(size_t done, size_t total, const std::string& what) {
  static const bool tty = isatty(fileno(stderr));
  if (!tty || total == 0) return;
  constexpr int kWidth = 30;
  const int fill = int(kWidth * done / total);
  std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu %-40.40s", fill, "##############################",
               kWidth - fill, "", done, total, what.c_str());
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace

int cmd_compile(int argc, char** argv) {
  std::vector<std::string> storage(argv, argv + argc);
  for (auto& a : storage) {
    if (a == "-o") a = "--output";
  }
  std::vector<char*> av;
  for (auto& a : storage) av.push_back(a.data());
  auto args = Args::parse(int(av.size()), av.data(),
                          {"json", "help", "lift-constants", "no-lift-constants", "no-memo"},
                          {"output", "target", "digest", "threads", "memo-dir"});
  if (!args.ok()) return report_error("compile", args.status());
  if (args->has("help") || args->positionals().size() != 1 || !args->get("output")) {
    std::fputs(kUsage, args->has("help") ? stdout : stderr);
    return args->has("help") ? kExitOk : kExitUsage;
  }
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
  options.memo_dir = args->get("memo-dir").value_or("");
  options.progress = progress;
  auto summary = compile_model(args->positionals()[0], *args->get("output"), options);
  if (!summary.ok()) return report_error("compile", summary.status());
  if (!summary->memo_error.empty()) {
    std::fprintf(stderr, "onnx-prepack compile: memo not recorded: %s\n",
                 summary->memo_error.c_str());
  }
  if (args->has("json")) {
    std::printf("%s\n", engine::compile_json(*summary).dump(2).c_str());
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
