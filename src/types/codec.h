// Codec signatures (format.md §3): a struct type's optional decoder and encoder
// FunctionProtos are checked against its canonical leaves. Running them is
// not part of this layer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onnx_prepack.pb.h"
#include "types/struct_type.h"

namespace onnx_prepack::types {

enum class CodecProblemKind {
  kInputCount,      // not one input per canonical leaf (decoder) / not one input (encoder)
  kInputType,       // an input untyped or typed unlike its leaf / the decoder output
  kOutput,          // not exactly one typed output of a standard type / not tensor(UINT8)[size]
  kOperator,        // an operator outside the default domain's deterministic allow-list
  kCapture,         // a value or attribute reference not defined inside the function
  kExternalData,    // a tensor attribute with external data
  kGraphAttribute,  // a GRAPH/GRAPHS attribute
};

struct CodecProblem {
  CodecProblemKind kind;
  std::string path;  // below `base`, e.g. "<base>.node[2]"
  std::string message;
};

// True for the deterministic default-domain operators a codec may use.
bool codec_operator_allowed(std::string_view domain, std::string_view op_type);

// Decoder: one typed input per leaf (element type equal, shape if given equal
// to the leaf dims), one typed output with a standard element type.
std::vector<CodecProblem> check_decoder(const onnx::FunctionProto& f, std::span<const Leaf> leaves,
                                        const std::string& base);

// Encoder: one input typed like the decoder output (when there is a decoder),
// one output tensor(UINT8) of rank 1 whose dim, when fixed, is `byte_size`.
std::vector<CodecProblem> check_encoder(const onnx::FunctionProto& f,
                                        const onnx::FunctionProto* decoder,
                                        std::optional<uint64_t> byte_size, const std::string& base);

}  // namespace onnx_prepack::types
