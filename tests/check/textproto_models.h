// Test models written as protobuf text format under tests/data/check and
// encoded at test time: a small base model (initializer "w", one CPU device)
// merged with the file, plus the expectations in its leading '#' lines.
#pragma once

#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "onnx_prepack.pb.h"

namespace onnx_prepack::testing {

inline constexpr const char* kBaseModel = R"pb(
  ir_version: 8
  opset_import { version: 13 }
  producer_name: "check-tests"
  graph {
    name: "g"
    initializer { name: "w" data_type: 1 dims: 2 raw_data: "\000\000\200?\000\000\000@" }
    input {
      name: "x"
      type {
        tensor_type {
          elem_type: 1
          shape { dim { dim_value: 2 } }
        }
      }
    }
    output {
      name: "y"
      type {
        tensor_type {
          elem_type: 1
          shape { dim { dim_value: 2 } }
        }
      }
    }
    node { input: "x" input: "w" output: "y" op_type: "Add" }
  }
  devices { type: "cpu" architecture: "x86_64-avx2" runtime: "onnx-prepack" runtime_version: "1" }
)pb";

struct TextModel {
  onnx::ModelProto proto;
  // "# key: value" header lines, in order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> all(const std::string& key) const {
    std::vector<std::string> out;
    for (const auto& [k, v] : headers) {
      if (k == key) out.push_back(v);
    }
    return out;
  }
  std::string first(const std::string& key) const {
    auto v = all(key);
    return v.empty() ? "" : v[0];
  }
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Parses `text` over the base model; returns false (and the error) on a syntax error.
inline bool load_text_model(const std::string& text, TextModel* out, std::string* error) {
  out->proto.Clear();
  if (!google::protobuf::TextFormat::ParseFromString(kBaseModel, &out->proto)) {
    *error = "base model does not parse";
    return false;
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("# ", 0) != 0) continue;
    auto colon = line.find(": ", 2);
    if (colon == std::string::npos) continue;
    out->headers.emplace_back(line.substr(2, colon - 2), line.substr(colon + 2));
  }
  google::protobuf::TextFormat::Parser parser;
  if (!parser.MergeFromString(text, &out->proto)) {
    *error = "text format parse failed";
    return false;
  }
  return true;
}

inline std::vector<std::string> text_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".textproto") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace onnx_prepack::testing
