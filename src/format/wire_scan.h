// Cheap walks over a ModelProto's wire format, done around the real parse:
// counting repeated top-level fields before the parse materialises them
// (a few bytes on the wire can become a hundred in memory), and saying which
// field failed when the parse does.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "onnx_prepack/status.h"

namespace onnx_prepack::format {

// Message nesting the parser accepts. A struct nesting level costs four
// messages (StructTypeProto > Structure > Field > TypeProto), so the checker's
// max_nesting_depth of 64 needs 256; the rest is room for the path from
// ModelProto down to a struct (subgraphs, functions, attributes).
inline constexpr int kParseRecursionLimit = 4 * 64 + 128;

// Counts allowed for the repeated extension fields of ModelProto (format.md §2),
// checked on the wire before parsing. struct_types is the checker's catalogue
// limit (format.md §3).
struct WireLimits {
  uint64_t max_struct_types = 65536;
  uint64_t max_devices = 65536;
  uint64_t max_compiled_tensors = uint64_t(1) << 20;
};

// Walks the top-level fields of a serialized ModelProto; fails when one of
// the counted fields passes its limit. Malformed wire data is left to the parse.
Status check_wire_limits(std::span<const uint8_t> bytes, const WireLimits& limits = {});

// After a failed parse of `bytes` as ModelProto: the deepest field path whose
// bytes do not parse ("graph.node[3].attribute[0]: nested deeper than 384
// messages" or "compiled_tensors[7]: malformed or truncated"), or "" when
// nothing more precise is found.
std::string describe_parse_failure(std::span<const uint8_t> bytes);

}  // namespace onnx_prepack::format
