// libFuzzer target: arbitrary bytes through base::parse_json, the reader of
// genai_config.json. Any crash, UB or stack overflow is a bug; a document it
// accepts must dump and parse back, and after that first round (which turns
// bytes that are not UTF-8 into U+FFFD) dump and parse must be a fixpoint.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/json.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto j = onnx_prepack::base::parse_json(text, "fuzz.json");
  if (!j.ok()) return 0;
  auto once = onnx_prepack::base::parse_json(j->dump(-1), "dumped.json");
  if (!once.ok()) __builtin_trap();
  const std::string text1 = once->dump(-1);
  auto twice = onnx_prepack::base::parse_json(text1, "dumped twice.json");
  if (!twice.ok() || twice->dump(-1) != text1) __builtin_trap();
  return 0;
}
