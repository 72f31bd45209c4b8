// Internal state of one check_model run, shared by the check_*.cc files.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "check/check.h"
#include "check/rules.h"
#include "types/struct_type.h"

namespace onnx_prepack::check {

// 64 lower-case hex digits: how lineage and payload digests are written.
inline bool is_hex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char ch : s) {
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  }
  return true;
}

// What the walk learnt about a (sub)type.
struct Summary {
  bool bad = false;         // an error in it or in something it references
  bool incomplete = false;  // the walk was cut by the depth limit
  uint32_t height = 0;      // concrete declarations on the longest path
  uint64_t leaves = 0;
  std::optional<uint64_t> bits;  // static size when known (no parameters)
};

class Checker {
 public:
  Checker(const format::Model& model, const CheckOptions& options, CheckReport* report);
  void run();

  // ---- diagnostics (deduplicated by rule and path) ----
  void error(std::string_view rule, const std::string& path, const std::string& message);
  void warning(std::string_view rule, const std::string& path, const std::string& message);

  // ---- struct types (check_struct_types.cc) ----
  void check_catalogue();
  // Catalogue entry `i` reached by `ref_path` at nesting `depth` (1 = root).
  Summary entry_summary(int i, const std::string& ref_path, uint32_t depth);
  // An inline root (StructProto.struct_type) at `path`.
  Summary inline_root(const onnx::StructTypeProto& type, const std::string& path);
  // A StructProto value: type resolution, dims, size, payload. Returns bad.
  bool check_value(const onnx::StructProto& value, const std::string& path);
  // A TypeProto of a graph value (uses 2 and 3 only).
  void check_graph_type(const onnx::TypeProto& type, const std::string& path);

  // Lineage keys of a compiled tensor (check_lineage.cc, format.md §4.5).
  void check_lineage(const onnx::CompiledTensorProto& ct, const std::string& path);

  // ---- helpers ----
  void check_metadata(const google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>& props,
                      const std::string& path);
  const onnx::ModelProto& proto() const { return model_.proto(); }
  bool catalogue_usable() const { return catalogue_usable_; }

 private:
  struct Ctx {
    int params = 0;                     // root dims_param count visible here
    std::vector<bool>* used = nullptr;  // which params a count used
  };
  Summary walk_root(const onnx::StructTypeProto& d, const std::string& path, uint32_t depth);
  Summary walk_decl(const onnx::StructTypeProto& d, const std::string& path, uint32_t depth,
                    bool is_root, Ctx& ctx);
  // One per kind of declaration; `s` carries what walk_decl found so far.
  Summary walk_array(const onnx::StructTypeProto& d, const std::string& path, uint32_t depth,
                     Ctx& ctx, Summary s);
  Summary walk_packed_array(const onnx::StructTypeProto& d, const std::string& path, Ctx& ctx,
                            Summary s);
  Summary walk_structure(const onnx::StructTypeProto& d, const std::string& path, uint32_t depth,
                         Ctx& ctx, Summary s);
  void multiply_bits(Summary& s, std::optional<uint64_t> count, std::optional<uint64_t> each,
                     const std::string& where);
  Summary walk_member(const onnx::TypeProto& t, const std::string& path, uint32_t depth, Ctx& ctx);
  template <typename A>
  bool check_count(const A& a, const std::string& path, Ctx& ctx, std::optional<uint64_t>* count);
  bool check_static_form(const onnx::StructTypeProto& s, const std::string& path);
  void check_codecs(const onnx::StructTypeProto& d, const std::string& path, Summary* s);
  void check_constant(const onnx::TensorProto& t, const std::string& path, Summary* s);

  const format::Model& model_;
  const CheckOptions& options_;
  CheckReport* report_;
  std::set<std::pair<std::string, std::string>> seen_;
  bool catalogue_usable_ = true;
  // Per catalogue entry: 0 new, 1 visiting, 2 done.
  std::vector<uint8_t> state_;
  std::vector<Summary> memo_;
  uint64_t constant_bytes_ = 0;
  bool constant_limit_reported_ = false;
  std::set<const void*> counted_constants_;
};

// Hooks of check_model.cc.
void check_devices_and_compiled(Checker& c, const format::Model& model, const CheckOptions& options,
                                CheckReport* report);
void check_graphs(Checker& c, const onnx::ModelProto& model);

}  // namespace onnx_prepack::check
