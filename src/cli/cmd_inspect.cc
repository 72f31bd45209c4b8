// onnx-prepack inspect MODEL [--json]
#include <algorithm>
#include <cstdio>
#include <map>

#include "base/json.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/spec.h"
#include "cli/text.h"
#include "engine/model_reports.h"
#include "format/data_type.h"
#include "format/model.h"
#include "format/tensor_info.h"

namespace onnx_prepack::cli {
namespace {

using base::Json;

void print_human(const Json& j, const format::Model& model) {
  const auto& p = model.proto();
  const auto& g = p.graph();
  std::printf("model        %s\n", model.path().c_str());
  std::printf("ir_version   %lld\n", (long long)p.ir_version());
  std::printf("opsets      ");
  for (const auto& o : p.opset_import()) {
    std::printf(" %s:%lld", o.domain().empty() ? "ai.onnx" : o.domain().c_str(),
                (long long)o.version());
  }
  std::printf("\nproducer     %s %s\n", p.producer_name().c_str(), p.producer_version().c_str());
  std::printf("\ninputs\n");
  for (const auto& v : g.input())
    std::printf("  %-32s %s\n", v.name().c_str(), format::type_string(v.type()).c_str());
  std::printf("outputs\n");
  for (const auto& v : g.output())
    std::printf("  %-32s %s\n", v.name().c_str(), format::type_string(v.type()).c_str());

  std::printf("\nnodes (%d)\n", g.node_size());
  std::map<std::string, int> ops;
  for (const auto& n : g.node()) ops[n.op_type()]++;
  std::vector<std::pair<int, std::string>> sorted;
  for (auto& [k, v] : ops) sorted.push_back({-v, k});
  std::sort(sorted.begin(), sorted.end());
  for (auto& [nv, k] : sorted) std::printf("  %-24s %6d\n", k.c_str(), -nv);

  uint64_t total = 0;
  std::vector<std::pair<uint64_t, int>> by_size;
  for (int i = 0; i < g.initializer_size(); ++i) {
    uint64_t b = format::tensor_byte_size(g.initializer(i));
    total += b;
    by_size.push_back({b, i});
  }
  std::sort(by_size.begin(), by_size.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::printf("\ninitializers %d, %s\n", g.initializer_size(), human_bytes(total).c_str());
  for (size_t k = 0; k < std::min(engine::kLargestShown, by_size.size()); ++k) {
    const auto& t = g.initializer(by_size[k].second);
    std::printf("  %-40s %-9s %-20s %12s  %s\n", t.name().c_str(),
                std::string(format::data_type_name(t.data_type())).c_str(),
                format::dims_string(t).c_str(), human_bytes(by_size[k].first).c_str(),
                std::string(format::storage_name(format::storage_of(t))).c_str());
  }
  if (by_size.size() > engine::kLargestShown)
    std::printf("  ... %zu more\n", by_size.size() - engine::kLargestShown);

  auto consts = model.constant_tensors();
  uint64_t cbytes = 0;
  for (const auto& c : consts) cbytes += format::tensor_byte_size(*c.tensor);
  std::printf("constants    %zu, %s\n", consts.size(), human_bytes(cbytes).c_str());

  std::printf("\nstruct_types %d\n", p.struct_types_size());
  for (const auto& st : j.as_object()) {
    if (st.first != "struct_types") continue;
    for (const auto& e : st.second.as_array()) std::printf("  %s\n", e.dump(-1).c_str());
  }
  std::printf("devices      %d\n", p.devices_size());
  for (int i = 0; i < p.devices_size(); ++i) {
    const auto& d = p.devices(i);
    std::printf("  [%d] %-6s %-28s %s %s\n", i, d.type().c_str(), d.architecture().c_str(),
                d.runtime().c_str(), d.runtime_version().c_str());
  }
  std::printf("compiled_tensors %d\n", p.compiled_tensors_size());
  for (const auto& st : j.as_object()) {
    if (st.first != "compiled_tensors") continue;
    for (const auto& e : st.second.as_array()) {
      std::string src, fmt, storage;
      int64_t dev = 0;
      std::string bytes;
      for (const auto& [k, v] : e.as_object()) {
        std::string s = v.dump(-1);
        if (k == "source")
          src = s;
        else if (k == "format")
          fmt = s;
        else if (k == "storage")
          storage = s;
        else if (k == "device")
          dev = std::stoll(s);
        else if (k == "payload_bytes")
          bytes = s;
      }
      std::printf("  %-40s dev %lld  %-36s %12s  %s\n", src.c_str(), (long long)dev, fmt.c_str(),
                  bytes.c_str(), storage.c_str());
    }
  }
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  const CommandSpec& spec = *find_command("inspect");
  int exit_code = kExitOk;
  auto args = parse_model_command(argc, argv, spec, exit_code);
  if (!args) return exit_code;
  auto model = format::Model::load(args->positionals()[0]);
  if (!model.ok()) return report_error("inspect", model.status());
  Json j = engine::inspect_json(**model);
  if (args->has("json")) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    print_human(j, **model);
  }
  return kExitOk;
}

}  // namespace onnx_prepack::cli
