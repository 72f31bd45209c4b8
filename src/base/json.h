// A small JSON value for CLI output: objects keep insertion order so the
// printed keys follow the documented order. parse_json reads one back (small
// configuration files such as onnxruntime-genai's genai_config.json).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "onnx_prepack/status.h"

namespace onnx_prepack::base {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() : v_(nullptr) {}
  Json(std::nullptr_t) : v_(nullptr) {}
  Json(bool b) : v_(b) {}
  Json(int v) : v_(int64_t(v)) {}
  Json(int64_t v) : v_(v) {}
  Json(uint64_t v) : v_(v) {}
  Json(double v) : v_(v) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}
  Json(Array a) : v_(std::move(a)) {}
  Json(Object o) : v_(std::move(o)) {}

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  // Object access: appends the key if missing.
  Json& operator[](std::string_view key);
  void push_back(Json v);  // arrays only

  bool is_object() const { return std::holds_alternative<Object>(v_); }
  bool is_array() const { return std::holds_alternative<Array>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  bool is_null() const { return std::holds_alternative<std::nullptr_t>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_number() const;
  bool as_bool() const { return std::get<bool>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  // A number as double (integers converted); nullopt for other kinds.
  std::optional<double> as_double() const;
  // An integer, or a double with an integral value in int64's range; nullopt otherwise.
  std::optional<int64_t> as_int64() const;
  // Object member `key` (the first of that name), or null when absent or not an object.
  const Json* find(std::string_view key) const;

  // indent < 0: compact on one line.
  std::string dump(int indent = 2) const;

 private:
  void dump_to(std::string& out, int indent, int depth) const;
  std::variant<std::nullptr_t, bool, int64_t, uint64_t, double, std::string, Array, Object> v_;
};

// One JSON value (RFC 8259) filling `text` but for white space. Errors are
// invalid_argument naming `what`, the byte offset and what was expected;
// nesting deeper than 64 levels is refused (no unbounded recursion).
Result<Json> parse_json(std::string_view text, std::string_view what);

std::string json_escape(std::string_view s);
std::string hex_lower(const uint8_t* data, size_t size);

}  // namespace onnx_prepack::base
