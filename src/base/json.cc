#include "base/json.h"

#include <cmath>
#include <cstdio>

namespace onnx_prepack::base {

Json& Json::operator[](std::string_view key) {
  if (!is_object()) v_ = Object{};
  auto& obj = std::get<Object>(v_);
  for (auto& kv : obj) {
    if (kv.first == key) return kv.second;
  }
  obj.emplace_back(std::string(key), Json());
  return obj.back().second;
}

void Json::push_back(Json v) {
  if (!is_array()) v_ = Array{};
  std::get<Array>(v_).push_back(std::move(v));
}

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(char(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string hex_lower(const uint8_t* data, size_t size) {
  static const char* kDigits = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 15];
  }
  return out;
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

void Json::dump_to(std::string& out, int indent, int depth) const {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out.push_back('\n');
    out.append(size_t(indent * d), ' ');
  };
  if (std::holds_alternative<std::nullptr_t>(v_)) {
    out += "null";
  } else if (auto* b = std::get_if<bool>(&v_)) {
    out += *b ? "true" : "false";
  } else if (auto* i = std::get_if<int64_t>(&v_)) {
    out += std::to_string(*i);
  } else if (auto* u = std::get_if<uint64_t>(&v_)) {
    out += std::to_string(*u);
  } else if (auto* d = std::get_if<double>(&v_)) {
    if (!std::isfinite(*d)) {
      out += "null";
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", *d);
      out += buf;
    }
  } else if (auto* s = std::get_if<std::string>(&v_)) {
    out += json_escape(*s);
  } else if (auto* a = std::get_if<Array>(&v_)) {
    if (a->empty()) {
      out += "[]";
      return;
    }
    out.push_back('[');
    for (size_t k = 0; k < a->size(); ++k) {
      if (k) out.push_back(',');
      newline(depth + 1);
      (*a)[k].dump_to(out, indent, depth + 1);
    }
    newline(depth);
    out.push_back(']');
  } else if (auto* o = std::get_if<Object>(&v_)) {
    if (o->empty()) {
      out += "{}";
      return;
    }
    out.push_back('{');
    for (size_t k = 0; k < o->size(); ++k) {
      if (k) out.push_back(',');
      newline(depth + 1);
      out += json_escape((*o)[k].first);
      out += indent < 0 ? ":" : ": ";
      (*o)[k].second.dump_to(out, indent, depth + 1);
    }
    newline(depth);
    out.push_back('}');
  }
}

}  // namespace onnx_prepack::base
