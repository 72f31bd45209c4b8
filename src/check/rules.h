// Every checker rule with its stable id (format.md §3, 4.1, 4.2). Ids never change
// meaning once released; docs/struct-types.md lists each with an example.
#pragma once

#include <array>
#include <string_view>

namespace onnx_prepack::check {

enum class Severity { kError, kWarning };

struct Rule {
  std::string_view id;
  Severity severity;
  std::string_view summary;
};

namespace rules {
// Struct types (format.md §3).
inline constexpr std::string_view kUnconstrained = "struct.unconstrained";
inline constexpr std::string_view kNotConcrete = "struct.not_concrete";
inline constexpr std::string_view kMisplacedDeclaration = "struct.misplaced_declaration";
inline constexpr std::string_view kStaticFormFields = "struct.static_form_fields";
inline constexpr std::string_view kTypeIndexRange = "struct.type_index_range";
inline constexpr std::string_view kCycle = "struct.cycle";
inline constexpr std::string_view kNestedDimsParam = "struct.nested_dims_param";
inline constexpr std::string_view kDimsIndexRange = "struct.dims_index_range";
inline constexpr std::string_view kCountUnset = "struct.count_unset";
inline constexpr std::string_view kDimsParamUnused = "struct.dims_param_unused";
inline constexpr std::string_view kDimsParamName = "struct.dims_param_name";
inline constexpr std::string_view kMemberType = "struct.member_type";
inline constexpr std::string_view kLeafType = "struct.leaf_type";
inline constexpr std::string_view kLeafNotScalar = "struct.leaf_not_scalar";
inline constexpr std::string_view kConstantExternal = "struct.constant_external";
inline constexpr std::string_view kConstantInvalid = "struct.constant_invalid";
inline constexpr std::string_view kFieldName = "struct.field_name";
inline constexpr std::string_view kComponentName = "struct.component_name";
inline constexpr std::string_view kComponentWidth = "struct.component_width";
inline constexpr std::string_view kCatalogueName = "struct.catalogue_name";
inline constexpr std::string_view kSizeOverflow = "struct.size_overflow";
inline constexpr std::string_view kNotWholeBytes = "struct.not_whole_bytes";
inline constexpr std::string_view kSizeMismatch = "struct.size_mismatch";
// Resource limits (format.md §3, checked before any allocation).
inline constexpr std::string_view kLimitNestingDepth = "limit.nesting_depth";
inline constexpr std::string_view kLimitFields = "limit.fields";
inline constexpr std::string_view kLimitConstantBytes = "limit.constant_bytes";
inline constexpr std::string_view kLimitCatalogueEntries = "limit.catalogue_entries";
inline constexpr std::string_view kLimitLeaves = "limit.leaves";
// Struct values (StructProto).
inline constexpr std::string_view kValueTypeRange = "value.type_range";
inline constexpr std::string_view kValueTypeConflict = "value.type_conflict";
inline constexpr std::string_view kValueDims = "value.dims";
inline constexpr std::string_view kValueExternalData = "value.external_data";
// Codec signatures (format.md §3).
inline constexpr std::string_view kCodecInputCount = "codec.input_count";
inline constexpr std::string_view kCodecInputType = "codec.input_type";
inline constexpr std::string_view kCodecOutput = "codec.output";
inline constexpr std::string_view kCodecOperator = "codec.operator";
inline constexpr std::string_view kCodecCapture = "codec.capture";
inline constexpr std::string_view kCodecExternalData = "codec.external_data";
inline constexpr std::string_view kCodecGraphAttribute = "codec.graph_attribute";
// Devices and compiled tensors (format.md §4.2).
inline constexpr std::string_view kDeviceDuplicate = "device.duplicate";
inline constexpr std::string_view kDeviceRange = "compiled.device_range";
inline constexpr std::string_view kDuplicateKey = "compiled.duplicate_key";
inline constexpr std::string_view kSourceMissing = "compiled.source_missing";
inline constexpr std::string_view kValueMissing = "compiled.value_missing";
inline constexpr std::string_view kDigestEmpty = "compiled.digest_empty";
inline constexpr std::string_view kAlgorithmEmpty = "compiled.algorithm_empty";
inline constexpr std::string_view kDigestLength = "compiled.digest_length";
inline constexpr std::string_view kMetadataDuplicateKey = "metadata.duplicate_key";
// Lineage of packs derived from several initializers (format.md §4.5).
inline constexpr std::string_view kLineageDigestMissing = "lineage.digest_missing";
inline constexpr std::string_view kLineageDigestFormat = "lineage.digest_format";
inline constexpr std::string_view kLineageSourceMissing = "lineage.source_missing";
inline constexpr std::string_view kLineageUnknownKey = "lineage.unknown_key";
// Warnings: load-time matters, never errors.
inline constexpr std::string_view kUnknownAlgorithm = "compiled.unknown_algorithm";
inline constexpr std::string_view kSourceAmbiguous = "compiled.source_ambiguous";
inline constexpr std::string_view kUnknownDeviceType = "device.unknown_type";
inline constexpr std::string_view kUnknownArchitecture = "device.unknown_architecture";
// Payload integrity (format.md §4.6): entries that verified loads always miss.
inline constexpr std::string_view kPayloadUnverifiable = "compiled.payload_unverifiable";
inline constexpr std::string_view kPayloadDigestFormat = "compiled.payload_digest_format";
}  // namespace rules

// The catalogue, in documentation order.
inline constexpr std::array<Rule, 58> kRules = {{
    {rules::kUnconstrained, Severity::kError,
     "a struct type with kind unset where an exact type is needed"},
    {rules::kNotConcrete, Severity::kError,
     "a catalogue entry or inline value type that is a type_index"},
    {rules::kMisplacedDeclaration, Severity::kError,
     "a concrete declaration inside a graph value's TypeProto"},
    {rules::kStaticFormFields, Severity::kError,
     "a static form with decoder, encoder, name, dims_param or metadata"},
    {rules::kTypeIndexRange, Severity::kError, "a type_index outside ModelProto.struct_types"},
    {rules::kCycle, Severity::kError, "type_index references that form a cycle"},
    {rules::kNestedDimsParam, Severity::kError,
     "a nested declaration or reference target with dims_param"},
    {rules::kDimsIndexRange, Severity::kError, "a dims_index outside the root's dims_param"},
    {rules::kCountUnset, Severity::kError,
     "an array or packed array without dimension or dims_index"},
    {rules::kDimsParamUnused, Severity::kError, "a dims_param entry no count uses"},
    {rules::kDimsParamName, Severity::kError, "an empty or repeated dims_param name"},
    {rules::kMemberType, Severity::kError,
     "an element or field that is neither a leaf, a struct type nor a constant"},
    {rules::kLeafType, Severity::kError,
     "a leaf whose element type has no fixed width (STRING, UNDEFINED, unknown)"},
    {rules::kLeafNotScalar, Severity::kError, "a leaf tensor_type with rank > 0"},
    {rules::kConstantExternal, Severity::kError, "a constant with external data"},
    {rules::kConstantInvalid, Severity::kError,
     "a constant whose type, dims or data are inconsistent"},
    {rules::kFieldName, Severity::kError, "an empty or repeated field name in a structure"},
    {rules::kComponentName, Severity::kError,
     "an empty or repeated component name in a packed array"},
    {rules::kComponentWidth, Severity::kError, "a component bit_width outside 1..64"},
    {rules::kCatalogueName, Severity::kError, "an empty or repeated ModelProto.struct_types name"},
    {rules::kSizeOverflow, Severity::kError, "a size that overflows uint64 bits"},
    {rules::kNotWholeBytes, Severity::kError, "a root size that is not a whole number of bytes"},
    {rules::kSizeMismatch, Severity::kError,
     "a payload whose length differs from the computed size"},
    {rules::kLimitNestingDepth, Severity::kError, "nesting deeper than max_nesting_depth (64)"},
    {rules::kLimitFields, Severity::kError,
     "more fields or components than max_fields_per_structure (4096)"},
    {rules::kLimitConstantBytes, Severity::kError,
     "more constant bytes in the model than max_constant_bytes (64 MiB)"},
    {rules::kLimitCatalogueEntries, Severity::kError,
     "more struct_types than max_catalogue_entries (65536)"},
    {rules::kLimitLeaves, Severity::kError,
     "more canonical leaves in one type than max_leaves (65536)"},
    {rules::kValueTypeRange, Severity::kError, "a StructProto.type out of range or below -1"},
    {rules::kValueTypeConflict, Severity::kError,
     "type >= 0 with struct_type, or type -1 without it"},
    {rules::kValueDims, Severity::kError, "StructProto.dims not one entry per dims_param"},
    {rules::kValueExternalData, Severity::kError, "malformed or unreadable external payload"},
    {rules::kCodecInputCount, Severity::kError, "a codec with the wrong number of inputs"},
    {rules::kCodecInputType, Severity::kError, "a codec input untyped or typed unlike its leaf"},
    {rules::kCodecOutput, Severity::kError, "a codec output missing, untyped or of the wrong type"},
    {rules::kCodecOperator, Severity::kError,
     "a codec operator outside the deterministic allow-list"},
    {rules::kCodecCapture, Severity::kError,
     "a codec referring to values or attributes from outside"},
    {rules::kCodecExternalData, Severity::kError, "a codec tensor attribute with external data"},
    {rules::kCodecGraphAttribute, Severity::kError, "a codec node with a graph attribute"},
    {rules::kDeviceDuplicate, Severity::kError, "two identical device descriptors"},
    {rules::kDeviceRange, Severity::kError, "a compiled tensor's device index out of range"},
    {rules::kDuplicateKey, Severity::kError,
     "two compiled tensors with one (source_name, device, type)"},
    {rules::kSourceMissing, Severity::kError, "a source_name naming no top-level initializer"},
    {rules::kValueMissing, Severity::kError, "a compiled tensor without a value"},
    {rules::kDigestEmpty, Severity::kError, "an empty source_digest"},
    {rules::kAlgorithmEmpty, Severity::kError, "an empty digest_algorithm"},
    {rules::kDigestLength, Severity::kError, "a digest of the wrong length for a known algorithm"},
    {rules::kMetadataDuplicateKey, Severity::kError, "a key repeated in one metadata_props list"},
    {rules::kLineageDigestMissing, Severity::kError,
     "a lineage.<role> naming an initializer without lineage.<role>.digest, or a digest key "
     "without its lineage.<role>"},
    {rules::kLineageDigestFormat, Severity::kError,
     "a lineage digest that is not 64 lower-case hex digits"},
    {rules::kLineageSourceMissing, Severity::kError,
     "a lineage.<role> naming no top-level initializer"},
    {rules::kLineageUnknownKey, Severity::kError,
     "a lineage./attr. key outside the roles and attributes its format declares"},
    {rules::kUnknownAlgorithm, Severity::kWarning, "a digest_algorithm this build does not know"},
    {rules::kSourceAmbiguous, Severity::kWarning, "a source_name naming several initializers"},
    {rules::kUnknownDeviceType, Severity::kWarning, "a device type this build does not know"},
    {rules::kUnknownArchitecture, Severity::kWarning,
     "an architecture string outside the known grammar"},
    {rules::kPayloadUnverifiable, Severity::kWarning,
     "a compiled tensor without payload_digest (a miss under verify full and memo)"},
    {rules::kPayloadDigestFormat, Severity::kWarning,
     "a payload_digest that is not the lower-case hex of a digest of its algorithm"},
}};

}  // namespace onnx_prepack::check
