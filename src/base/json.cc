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

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (1-4), or 0 when the bytes
// there are not one (stray continuation, overlong form, surrogate, past
// U+10FFFF, truncated).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Names come from files and may hold any bytes: a byte that starts no
      // well-formed UTF-8 sequence is written as U+FFFD, so the output is
      // always valid JSON (RFC 8259 requires UTF-8).
      const size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        out += "\\ufffd";
      } else {
        out.append(s.substr(i, n));
        i += n - 1;
      }
      continue;
    }
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
