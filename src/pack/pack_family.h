// A pack family: one kind of packed weight (GEMM B panels, Conv filter blocks,
// MatMulNBits panel records, ...). Each family implements this interface in its
// own files (`*_family.cc`) and is listed once in pack_family.cc; compile,
// explain, the runtime's weight preparation and the C API iterate the registry
// and name no family. docs/architecture.md, "Pack families".
//
// The one rule every caller shares: a weight use (an initializer in one
// consumer position) is eligible by `eligible`, its request at a host level is
// `pack_request` (every format the consumer's kernels at that level read, best
// first), a miss packs `miss_format`, and `plan` describes a pack completely.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "device/isa_names.h"
#include "format/model.h"
#include "onnx_prepack.pb.h"
#include "onnx_prepack/status.h"
#include "resolve/lineage.h"
#include "resolve/resolver.h"

namespace onnx_prepack::pack {

// One weight in one consumer position, described alike by compile and explain
// (from the model) and by the runtime (from the node it plans).
struct WeightUse {
  std::string source;    // the initializer
  std::string consumer;  // the node's name, else its op type
  const onnx::NodeProto* node = nullptr;
  int input = 0;          // the node input that reads `source`
  int32_t data_type = 0;  // the initializer's element type
  std::vector<int64_t> dims;
  // The model the use comes from (compile, explain); null at run time, where
  // the consumer packs a miss from its own constants.
  const format::Model* model = nullptr;
};

// A persisted format: StructTypeProto name and format_version, the device
// architecture of its entries, and the ISA level of the kernel that reads it.
struct FormatInfo {
  std::string_view name;
  std::string_view version;
  std::string_view architecture;
  device::IsaLevel isa = device::IsaLevel::kRef;
};

// Canonical raw content of an initializer by name (4-byte aligned): the
// model's at compile time, the session's constants at run time.
using ContentFn = std::function<Result<std::span<const uint8_t>>(const std::string& name)>;

// Everything needed to write, check or fill one pack of a use in one format.
struct PackPlan {
  FormatInfo format;
  onnx::StructTypeProto type;
  std::vector<uint64_t> dims;
  uint64_t payload_bytes = 0;
  // Fills exactly payload_bytes (64-byte aligned); valid while the content
  // lives. Null when the family packs only from the model and use.model is null.
  std::function<Status(std::span<uint8_t>)> pack;
};

class PackFamily {
 public:
  virtual ~PackFamily() = default;
  virtual std::string_view name() const = 0;
  // Whether input `input` of `node`, an initializer of this type and shape,
  // is this family's weight. Empty shapes are eligible (plan says why they
  // are not packed); the node's attributes may matter.
  virtual bool eligible(const onnx::NodeProto& node, int input, int32_t data_type,
                        std::span<const int64_t> dims) const = 0;
  // A short description of the use's layout for explain ("kn", "conv group 2").
  virtual std::string label(const WeightUse& use) const = 0;
  // Every format of the family, best first.
  virtual std::span<const FormatInfo> formats() const = 0;
  // The formats a consumer of `use` accepts at `level`: every format its
  // kernels at that level read, best first (empty: nothing can be packed).
  virtual std::vector<FormatInfo> accepted(const WeightUse& use, device::IsaLevel level) const = 0;
  // The format a miss packs into at `level`; nullopt when the use cannot be
  // packed there (the consumer then computes from the source).
  virtual std::optional<FormatInfo> miss_format(const WeightUse& use,
                                                device::IsaLevel level) const = 0;
  // The pack of `use` in `format`; an error says why the use cannot be packed
  // (an empty weight, a shape the format does not hold).
  virtual Result<PackPlan> plan(const WeightUse& use, const FormatInfo& format,
                                const ContentFn& content, base::ThreadPool* pool) const = 0;
  // Checks an entry's struct type and dims against the use (the resolver's check_dims).
  virtual Status check_entry(const WeightUse& use, const FormatInfo& format,
                             const onnx::StructTypeProto& type,
                             std::span<const uint64_t> dims) const = 0;
  // The other initializers and attributes a pack reads (format.md §4.5); nullopt
  // for packs of their source alone.
  virtual std::optional<resolve::LineageRequest> lineage(const WeightUse&) const {
    return std::nullopt;
  }
  // A key telling apart uses of one source that need different packs
  // (layout, group, attributes); uses with equal keys share one pack.
  virtual std::string use_key(const WeightUse& use) const { return label(use); }
};

// The registry, in the order compile and explain list weights.
std::span<const PackFamily* const> pack_families();
const PackFamily* find_pack_family(std::string_view name);
// The family and format of a persisted format name (nullptr: none of ours).
const PackFamily* family_of_format(std::string_view format_name, FormatInfo* format = nullptr);

// The family whose weight input `input` of `node` is (nullptr: none).
const PackFamily* family_for(const onnx::NodeProto& node, int input, int32_t data_type,
                             std::span<const int64_t> dims);

// The resolver's request for `use` at `level`: the accepted formats, each
// with the family's entry check, and the lineage.
// with the family's entry check, and the lineage. When none is accepted and the
// family has no format for the level's machine at all, no_format_detail says so.
resolve::PackRequest pack_request(const PackFamily& family, const WeightUse& use,
                                  device::IsaLevel level);

// The machine of a kernel level's chain (nullopt for ref, shared by both).
std::optional<device::Machine> level_machine(device::IsaLevel level);
// Whether some format of `family` is for `machine` (by its architecture string).
bool has_machine_formats(const PackFamily& family, device::Machine machine);
// "no packed format for family gemm_b on aarch64".
std::string no_machine_format_message(const PackFamily& family, device::Machine machine);

// Every eligible use of a top-level initializer in the model, in node order,
// one per (family, source, use key). `graph_input` is set for initializers
// that are also graph inputs; `duplicated` for names given to several
// initializers (never packed: the name is ambiguous).
struct ModelWeightUse {
  const PackFamily* family = nullptr;
  WeightUse use;
  bool graph_input = false;
  bool duplicated = false;
};
// Main-graph initializers read by nodes inside If/Loop/Scan bodies are uses
// too (the body's node is the consumer), unless the body shadows the name.
std::vector<ModelWeightUse> model_weight_uses(const format::Model& model);

// Every node of `g` and of its subgraphs, nested bodies after their node.
// `shadowed` holds the names some enclosing body defines (inputs,
// initializers, node outputs), which hide a main-graph initializer of that
// name; `body_initializers` those of the innermost body (empty at depth 0).
struct ScopedNode {
  const onnx::NodeProto* node = nullptr;
  int depth = 0;  // 0: the main graph
  const std::set<std::string>* shadowed = nullptr;
  const std::set<std::string>* body_initializers = nullptr;
};
void for_each_scoped_node(const onnx::GraphProto& g,
                          const std::function<void(const ScopedNode&)>& fn);

// "role=name (digest 0123abcd...)" and "attr=value" items of an entry's
// lineage (any family's), for diagnostics; empty when it has none.
std::vector<std::string> lineage_summary(const onnx::CompiledTensorProto& entry);

// The model's content function: canonical raw bytes of each initializer
// (converted from typed fields, copied when unaligned; the copies live as long
// as the returned function).
ContentFn model_content(const format::Model& model);

}  // namespace onnx_prepack::pack
