// parse_json and Json's readers: a recursive-descent reader of RFC 8259 for
// small configuration files (genai_config.json). Depth is bounded, so a
// hostile file cannot exhaust the stack; every error names the byte offset.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "base/json.h"

namespace onnx_prepack::base {

bool Json::is_number() const {
  return std::holds_alternative<int64_t>(v_) || std::holds_alternative<uint64_t>(v_) ||
         std::holds_alternative<double>(v_);
}

std::optional<double> Json::as_double() const {
  if (auto* i = std::get_if<int64_t>(&v_)) return double(*i);
  if (auto* u = std::get_if<uint64_t>(&v_)) return double(*u);
  if (auto* d = std::get_if<double>(&v_)) return *d;
  return std::nullopt;
}

std::optional<int64_t> Json::as_int64() const {
  if (auto* i = std::get_if<int64_t>(&v_)) return *i;
  if (auto* u = std::get_if<uint64_t>(&v_)) {
    if (*u <= uint64_t(INT64_MAX)) return int64_t(*u);
    return std::nullopt;
  }
  if (auto* d = std::get_if<double>(&v_)) {
    // 2^63 is the first double past int64's range.
    if (std::isfinite(*d) && *d == std::floor(*d) && *d >= -9223372036854775808.0 &&
        *d < 9223372036854775808.0) {
      return int64_t(*d);
    }
  }
  return std::nullopt;
}

const Json* Json::find(std::string_view key) const {
  const auto* o = std::get_if<Object>(&v_);
  if (o == nullptr) return nullptr;
  for (const auto& kv : *o) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(std::string_view text, std::string_view what) : s_(text), what_(what) {}

  Result<Json> document() {
    OP_ASSIGN_OR_RETURN(Json v, value(0));
    skip_space();
    if (p_ != s_.size()) return error("expected the end of the document");
    return v;
  }

 private:
  Status error(const std::string& expected) const {
    std::string got = p_ < s_.size() ? "'" + std::string(1, s_[p_]) + "'" : "the end";
    return invalid_argument(std::string(what_) + ": not JSON: at byte " + std::to_string(p_) +
                            ", " + expected + ", got " + got);
  }

  void skip_space() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r'))
      ++p_;
  }

  bool take(std::string_view word) {
    if (s_.substr(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  Result<Json> value(int depth) {
    if (depth >= kMaxDepth) {
      return error("nesting of at most " + std::to_string(kMaxDepth) + " levels");
    }
    skip_space();
    if (p_ >= s_.size()) return error("expected a value");
    const char c = s_[p_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') {
      OP_ASSIGN_OR_RETURN(std::string str, string());
      return Json(std::move(str));
    }
    if (take("true")) return Json(true);
    if (take("false")) return Json(false);
    if (take("null")) return Json(nullptr);
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    return error("expected a value");
  }

  Result<Json> object(int depth) {
    ++p_;  // '{'
    Json::Object members;
    skip_space();
    if (p_ < s_.size() && s_[p_] == '}') {
      ++p_;
      return Json(std::move(members));
    }
    for (;;) {
      skip_space();
      if (p_ >= s_.size() || s_[p_] != '"') return error("expected a member name");
      OP_ASSIGN_OR_RETURN(std::string key, string());
      skip_space();
      if (p_ >= s_.size() || s_[p_] != ':') return error("expected ':'");
      ++p_;
      OP_ASSIGN_OR_RETURN(Json v, value(depth + 1));
      // A repeated name keeps its first value (find() returns the first).
      members.emplace_back(std::move(key), std::move(v));
      skip_space();
      if (p_ < s_.size() && s_[p_] == ',') {
        ++p_;
        continue;
      }
      if (p_ < s_.size() && s_[p_] == '}') {
        ++p_;
        return Json(std::move(members));
      }
      return error("expected ',' or '}'");
    }
  }

  Result<Json> array(int depth) {
    ++p_;  // '['
    Json arr = Json::array();
    skip_space();
    if (p_ < s_.size() && s_[p_] == ']') {
      ++p_;
      return arr;
    }
    for (;;) {
      OP_ASSIGN_OR_RETURN(Json v, value(depth + 1));
      arr.push_back(std::move(v));
      skip_space();
      if (p_ < s_.size() && s_[p_] == ',') {
        ++p_;
        continue;
      }
      if (p_ < s_.size() && s_[p_] == ']') {
        ++p_;
        return arr;
      }
      return error("expected ',' or ']'");
    }
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(char(cp));
    } else if (cp < 0x800) {
      out.push_back(char(0xC0 | (cp >> 6)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(char(0xE0 | (cp >> 12)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(char(0xF0 | (cp >> 18)));
      out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(char(0x80 | (cp & 0x3F)));
    }
  }

  Result<uint32_t> hex4() {
    if (p_ + 4 > s_.size()) return error("expected 4 hex digits");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k, ++p_) {
      const char h = s_[p_];
      v <<= 4;
      if (h >= '0' && h <= '9') {
        v |= uint32_t(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        v |= uint32_t(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        v |= uint32_t(h - 'A' + 10);
      } else {
        return error("expected a hex digit");
      }
    }
    return v;
  }

  Result<std::string> string() {
    ++p_;  // '"'
    std::string out;
    for (;;) {
      if (p_ >= s_.size()) return error("expected the closing '\"'");
      const char c = s_[p_];
      if (c == '"') {
        ++p_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) return error("expected no control character");
      if (c != '\\') {
        out.push_back(c);
        ++p_;
        continue;
      }
      ++p_;
      if (p_ >= s_.size()) return error("expected an escape");
      const char e = s_[p_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          OP_ASSIGN_OR_RETURN(uint32_t cp, hex4());
          if (cp >= 0xD800 && cp <= 0xDBFF && take("\\u")) {
            OP_ASSIGN_OR_RETURN(uint32_t lo, hex4());
            if (lo < 0xDC00 || lo > 0xDFFF) return error("expected a low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD;  // a lone surrogate: the replacement character
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --p_;
          return error("expected an escape (\\\" \\\\ / b f n r t u)");
      }
    }
  }

  Result<Json> number() {
    const size_t start = p_;
    if (s_[p_] == '-') ++p_;
    auto digits = [&] {
      const size_t d = p_;
      while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') ++p_;
      return p_ - d;
    };
    if (p_ < s_.size() && s_[p_] == '0') {
      ++p_;
    } else if (digits() == 0) {
      return error("expected a digit");
    }
    bool integral = true;
    if (p_ < s_.size() && s_[p_] == '.') {
      ++p_;
      integral = false;
      if (digits() == 0) return error("expected a digit after '.'");
    }
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      ++p_;
      integral = false;
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      if (digits() == 0) return error("expected a digit in the exponent");
    }
    const std::string text(s_.substr(start, p_ - start));
    if (integral) {
      errno = 0;
      char* end = nullptr;
      if (text[0] == '-') {
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (errno != ERANGE) return Json(int64_t(v));
      } else {
        const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
        if (errno != ERANGE) {
          if (v <= uint64_t(INT64_MAX)) return Json(int64_t(v));
          return Json(uint64_t(v));
        }
      }
      // Past 64 bits: kept as the nearest double.
    }
    return Json(std::strtod(text.c_str(), nullptr));
  }

  std::string_view s_;
  std::string_view what_;
  size_t p_ = 0;
};

}  // namespace

Result<Json> parse_json(std::string_view text, std::string_view what) {
  return Parser(text, what).document();
}

}  // namespace onnx_prepack::base
