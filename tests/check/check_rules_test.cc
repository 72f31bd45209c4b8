// Data-driven rule tests: one invalid model per rule under
// tests/data/check/invalid (failing with that rule id and path) and the
// worked examples under tests/data/check/valid (passing with their sizes and
// leaf views).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <span>

#include "base/json.h"
#include "check/check.h"
#include "check/rules.h"
#include "digest/digest.h"
#include "format/data_type.h"
#include "textproto_models.h"
#include "types/struct_type.h"

namespace onnx_prepack::check {
namespace {

using testing::TextModel;

const std::string kInvalidDir = std::string(OP_TEST_DATA_DIR) + "/check/invalid";
const std::string kValidDir = std::string(OP_TEST_DATA_DIR) + "/check/valid";

std::string describe(const CheckReport& r) {
  std::string s;
  for (const auto& d : r.errors)
    s += "  error " + d.rule + " @ " + d.path + ": " + d.message + "\n";
  for (const auto& d : r.warnings)
    s += "  warning " + d.rule + " @ " + d.path + ": " + d.message + "\n";
  return s;
}

TextModel load(const std::string& path) {
  TextModel m;
  std::string err;
  EXPECT_TRUE(testing::load_text_model(testing::read_text(path), &m, &err)) << path << ": " << err;
  return m;
}

CheckOptions options_for(const TextModel& m) {
  CheckOptions o;
  for (const auto& opt : m.all("option")) {
    std::istringstream in(opt);
    std::string key;
    uint64_t value = 0;
    in >> key >> value;
    if (key == "max_constant_bytes") o.max_constant_bytes = value;
    if (key == "max_catalogue_entries") o.max_catalogue_entries = uint32_t(value);
  }
  return o;
}

bool has(const std::vector<Diagnostic>& ds, const std::string& rule, const std::string& path) {
  return std::any_of(ds.begin(), ds.end(),
                     [&](const Diagnostic& d) { return d.rule == rule && d.path == path; });
}

TEST(CheckRules, EveryInvalidModelFailsWithItsRuleAndPath) {
  auto files = testing::text_files(kInvalidDir);
  ASSERT_GE(files.size(), kRules.size());
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    TextModel m = load(file);
    auto model = format::Model::from_proto(m.proto, kInvalidDir);
    CheckReport r = check_model(*model, options_for(m));
    const std::string path = m.first("path");
    ASSERT_FALSE(path.empty());
    if (!m.first("rule").empty()) {
      const std::string rule = m.first("rule");
      EXPECT_EQ(std::filesystem::path(file).stem().string(), rule);
      EXPECT_FALSE(r.valid());
      EXPECT_TRUE(has(r.errors, rule, path)) << "want " << rule << " @ " << path << ", got:\n"
                                             << describe(r);
      for (const auto& d : r.errors) EXPECT_FALSE(d.message.empty());
    } else {
      const std::string rule = m.first("warning");
      ASSERT_FALSE(rule.empty()) << "file names neither a rule nor a warning";
      EXPECT_TRUE(r.valid()) << describe(r);
      EXPECT_TRUE(has(r.warnings, rule, path))
          << "want warning " << rule << " @ " << path << ", got:\n"
          << describe(r);
    }
  }
}

TEST(CheckRules, EveryRuleHasAnInvalidModel) {
  std::set<std::string> covered;
  for (const auto& file : testing::text_files(kInvalidDir))
    covered.insert(std::filesystem::path(file).stem());
  std::set<std::string_view> ids;
  for (const auto& rule : kRules) {
    EXPECT_TRUE(ids.insert(rule.id).second) << "duplicate rule id " << rule.id;
    EXPECT_TRUE(covered.count(std::string(rule.id))) << "no invalid model for " << rule.id;
  }
}

// "sign:UINT8[1000]" -> name, type, dims.
void parse_leaf(const std::string& spec, std::string* name, int32_t* type,
                std::vector<uint64_t>* dims) {
  auto colon = spec.find(':');
  auto bracket = spec.find('[');
  *name = spec.substr(0, colon);
  *type = format::data_type_from_name(spec.substr(colon + 1, bracket - colon - 1)).value_or(-1);
  dims->clear();
  std::string inner = spec.substr(bracket + 1, spec.size() - bracket - 2);
  std::istringstream in(inner);
  std::string part;
  while (std::getline(in, part, ',')) dims->push_back(std::stoull(part));
}

void fill_payloads(TextModel& m, int delta) {
  for (const auto& p : m.all("payload")) {
    std::istringstream in(p);
    int index = 0;
    uint64_t size = 0;
    in >> index >> size;
    std::string bytes(size_t(int64_t(size) + delta), '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char((i * 131 + 7) & 0xff);
    auto* entry = m.proto.mutable_compiled_tensors(index);
    entry->mutable_value()->set_raw_data(bytes);
    // As a writer would (format.md §4.6); without it the checker warns.
    const std::span<const uint8_t> part(reinterpret_cast<const uint8_t*>(bytes.data()),
                                        bytes.size());
    const auto d = digest::hash_bytes(digest::Algorithm::kBlake3, {&part, 1});
    auto* prop = entry->add_metadata_props();
    prop->set_key("payload_digest");
    prop->set_value(base::hex_lower(d.data(), d.size()));
  }
}

TEST(CheckRules, WorkedExamplesPassWithTheirSizesAndLeaves) {
  auto files = testing::text_files(kValidDir);
  ASSERT_GE(files.size(), 4u);
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    TextModel m = load(file);
    fill_payloads(m, 0);
    auto model = format::Model::from_proto(m.proto, kValidDir);
    CheckReport r = check_model(*model);
    EXPECT_TRUE(r.valid()) << describe(r);
    EXPECT_TRUE(r.warnings.empty()) << describe(r);
    EXPECT_TRUE(r.invalid_compiled_tensors.empty());
    const auto& proto = model->proto();
    for (const auto& s : m.all("static")) {
      std::istringstream in(s);
      int index = 0;
      uint64_t size = 0;
      in >> index >> size;
      EXPECT_EQ(types::static_byte_size(proto, proto.struct_types(index)),
                std::optional<uint64_t>(size));
    }
    for (const auto& p : m.all("payload")) {
      std::istringstream in(p);
      int index = 0;
      uint64_t size = 0;
      in >> index >> size;
      auto bytes = types::value_byte_size(proto, proto.compiled_tensors(index).value());
      ASSERT_TRUE(bytes.ok()) << bytes.status().message();
      EXPECT_EQ(*bytes, size);
    }
    for (const auto& l : m.all("leaves")) {
      std::istringstream in(l);
      int index = 0;
      in >> index;
      const auto& value = proto.compiled_tensors(index).value();
      auto type = types::value_type(proto, value);
      ASSERT_TRUE(type.ok());
      std::span<const uint64_t> dims(value.dims().data(), size_t(value.dims_size()));
      const auto& raw = value.raw_data();
      auto leaves = types::read_leaves(proto.struct_types(), **type, dims,
                                       {reinterpret_cast<const uint8_t*>(raw.data()), raw.size()});
      ASSERT_TRUE(leaves.ok()) << leaves.status().message();
      std::string spec;
      size_t k = 0;
      while (in >> spec) {
        ASSERT_LT(k, leaves->size());
        std::string name;
        int32_t et = 0;
        std::vector<uint64_t> want_dims;
        parse_leaf(spec, &name, &et, &want_dims);
        const auto& leaf = (*leaves)[k++];
        EXPECT_EQ(leaf.name, name);
        EXPECT_EQ(leaf.elem_type, et) << name;
        EXPECT_EQ(leaf.dims, want_dims) << name;
        uint64_t n = 1;
        for (auto d : want_dims) n *= d;
        EXPECT_EQ(leaf.data.size(), *format::raw_byte_size(et, n)) << name;
      }
      EXPECT_EQ(k, leaves->size());
    }
  }
}

TEST(CheckRules, WorkedExamplesRejectAPayloadOneByteShort) {
  for (const auto& file : testing::text_files(kValidDir)) {
    SCOPED_TRACE(file);
    TextModel m = load(file);
    if (m.all("payload").empty()) continue;
    fill_payloads(m, -1);
    auto model = format::Model::from_proto(m.proto, kValidDir);
    CheckReport r = check_model(*model);
    EXPECT_FALSE(r.valid());
    EXPECT_TRUE(has(r.errors, std::string(rules::kSizeMismatch), "compiled_tensors[0].value"))
        << describe(r);
    EXPECT_TRUE(r.invalid_compiled_tensors.count(0));
  }
}

}  // namespace
}  // namespace onnx_prepack::check
