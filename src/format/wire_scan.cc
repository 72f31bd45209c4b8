#include "format/wire_scan.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/message.h>
#include <google/protobuf/wire_format_lite.h>

#include <climits>
#include <map>
#include <memory>

#include "onnx_prepack.pb.h"

namespace onnx_prepack::format {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::MessageFactory;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// One length-delimited field found by walking a message's top level.
struct LengthField {
  int number = 0;
  int index = 0;  // occurrence of this field number so far
  std::span<const uint8_t> bytes;
};

// Walks the top level of a message; calls `on_length` for each length-delimited
// field. Returns false at the first malformed tag or value (`bad_at` = offset).
template <typename F>
bool walk(std::span<const uint8_t> bytes, F&& on_length, uint64_t* bad_at) {
  CodedInputStream in(bytes.data(), int(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  std::map<int, int> seen;
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.CurrentPosition() == int(bytes.size()) || (*bad_at = 0, false);
    const int number = int(WireFormatLite::GetTagFieldNumber(tag));
    const int start = in.CurrentPosition();
    if (WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t len = 0;
      if (!in.ReadVarint32(&len) || len > uint32_t(INT_MAX) ||
          uint64_t(in.CurrentPosition()) + len > bytes.size()) {
        *bad_at = uint64_t(start);
        return false;
      }
      const int at = in.CurrentPosition();
      if (!on_length(LengthField{number, seen[number]++, bytes.subspan(size_t(at), len)})) {
        return true;
      }
      in.Skip(int(len));
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      *bad_at = uint64_t(start);
      return false;
    }
  }
}

bool parses(const Message& prototype, std::span<const uint8_t> bytes, int limit) {
  std::unique_ptr<Message> m(prototype.New());
  CodedInputStream in(bytes.data(), int(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  in.SetRecursionLimit(limit);
  return m->MergePartialFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// Depth-first: the first sub-message of `prototype` that does not parse.
std::string locate(const Message& prototype, std::span<const uint8_t> bytes, int limit,
                   const std::string& path) {
  const Descriptor* d = prototype.GetDescriptor();
  if (limit <= 0) {
    return path + ": nested deeper than " + std::to_string(kParseRecursionLimit) + " messages";
  }
  std::string found;
  uint64_t bad_at = 0;
  const bool walked = walk(
      bytes,
      [&](const LengthField& f) {
        const FieldDescriptor* fd = d->FindFieldByNumber(f.number);
        if (fd == nullptr || fd->type() != FieldDescriptor::TYPE_MESSAGE) return true;
        const Message* sub = MessageFactory::generated_factory()->GetPrototype(fd->message_type());
        if (sub == nullptr || parses(*sub, f.bytes, limit - 1)) return true;
        std::string p = (path.empty() ? "" : path + ".") + fd->name();
        if (fd->is_repeated()) p += "[" + std::to_string(f.index) + "]";
        found = locate(*sub, f.bytes, limit - 1, p);
        if (found.empty()) found = p + ": malformed";
        return false;
      },
      &bad_at);
  if (!found.empty()) return found;
  if (!walked) {
    return (path.empty() ? std::string("top level") : path) + ": malformed or truncated at byte " +
           std::to_string(bad_at) + " of " + std::to_string(bytes.size());
  }
  return "";
}

}  // namespace

Status check_wire_limits(std::span<const uint8_t> bytes, const WireLimits& limits) {
  uint64_t struct_types = 0, devices = 0, compiled = 0, bad_at = 0;
  walk(
      bytes,
      [&](const LengthField& f) {
        struct_types += f.number == 20000;
        devices += f.number == 20001;
        compiled += f.number == 20002;
        return true;
      },
      &bad_at);
  auto over = [](const char* what, uint64_t n, uint64_t max) {
    return resource_exhausted("model has " + std::to_string(n) + " " + what +
                              ", more than the limit of " + std::to_string(max));
  };
  if (struct_types > limits.max_struct_types) {
    return over("struct_types", struct_types, limits.max_struct_types);
  }
  if (devices > limits.max_devices) return over("devices", devices, limits.max_devices);
  if (compiled > limits.max_compiled_tensors) {
    return over("compiled_tensors", compiled, limits.max_compiled_tensors);
  }
  return ok_status();
}

std::string describe_parse_failure(std::span<const uint8_t> bytes) {
  if (bytes.size() > size_t(INT_MAX)) return "";
  std::string where = locate(onnx::ModelProto::default_instance(), bytes, kParseRecursionLimit, "");
  // A path hundreds of messages deep: its head and tail say enough.
  constexpr size_t kHead = 160, kTail = 120;
  const auto colon = where.rfind(": ");
  if (colon != std::string::npos && colon > kHead + kTail + 5) {
    where = where.substr(0, kHead) + " ... " + where.substr(colon - kTail);
  }
  return where;
}

}  // namespace onnx_prepack::format
