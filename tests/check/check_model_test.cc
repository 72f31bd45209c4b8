#include <gtest/gtest.h>

#include <filesystem>

#include "check/check.h"
#include "check/rules.h"
#include "testing/test_models.h"
#include "textproto_models.h"

namespace onnx_prepack::check {
namespace {

CheckReport check_text(const std::string& text, CheckOptions options = {}, std::string dir = ".") {
  testing::TextModel m;
  std::string err;
  EXPECT_TRUE(testing::load_text_model(text, &m, &err)) << err;
  auto model = format::Model::from_proto(m.proto, dir);
  return check_model(*model, options);
}

int count_rule(const std::vector<Diagnostic>& ds, std::string_view rule) {
  return int(
      std::count_if(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.rule == rule; }));
}

constexpr const char* kPoint = R"pb(
  struct_types {
    name: "P"
    structure {
      field {
        name: "x"
        type { tensor_type { elem_type: 1 } }
      }
    }
  }
)pb";

std::string compiled(const std::string& value, const std::string& extra = "") {
  return "compiled_tensors { source_name: \"w\" value { " + value +
         " } device: 0 source_digest: \"0123456789abcdef0123456789abcdef\" digest_algorithm: "
         "\"blake3\" " +
         extra + " }\n";
}

TEST(CheckModel, PlainModelIsValid) {
  auto model = format::Model::from_proto(testing::make_mlp(4, 8, 2, 1), ".");
  CheckReport r = check_model(*model);
  EXPECT_TRUE(r.valid());
  EXPECT_TRUE(r.warnings.empty());
}

TEST(CheckModel, ReportsEveryProblemNotOnlyTheFirst) {
  std::string text = std::string(kPoint) + compiled("type: 0 raw_data: \"abcd\"") +  // [0] fine
                     compiled("type: 0 raw_data: \"abcd\"") +  // [1] duplicate key of [0]
                     compiled("type: 9 raw_data: \"abcd\"") +  // [2] type out of range
                     compiled(R"pb(type: -1
                                   struct_type {
                                     structure {
                                       field {
                                         name: "a"
                                         type { tensor_type { elem_type: 1 } }
                                       }
                                       field {
                                         name: "a"
                                         type { tensor_type { elem_type: 8 } }
                                       }
                                     }
                                   })pb");                    // [3]
  CheckReport r = check_model(*format::Model::from_proto(
      [&] {
        testing::TextModel m;
        std::string err;
        testing::load_text_model(text, &m, &err);
        return m.proto;
      }(),
      "."));
  EXPECT_EQ(count_rule(r.errors, rules::kDuplicateKey), 1);
  EXPECT_EQ(count_rule(r.errors, rules::kValueTypeRange), 1);
  // The issue's path style, for both problems of entry 3.
  bool field_name = false, leaf_type = false;
  for (const auto& d : r.errors) {
    if (d.rule == rules::kFieldName) {
      EXPECT_EQ(d.path, "compiled_tensors[3].value.struct_type.structure.field[1]");
      field_name = true;
    }
    if (d.rule == rules::kLeafType) {
      EXPECT_EQ(
          d.path,
          "compiled_tensors[3].value.struct_type.structure.field[1].type.tensor_type.elem_type");
      EXPECT_NE(d.message.find("STRING"), std::string::npos);
      leaf_type = true;
    }
  }
  EXPECT_TRUE(field_name);
  EXPECT_TRUE(leaf_type);
  EXPECT_EQ(r.invalid_compiled_tensors, (std::set<int>{1, 2, 3}));
}

TEST(CheckModel, DigestLengthMattersOnlyForKnownAlgorithms) {
  auto with = [](const std::string& alg, const std::string& digest) {
    return std::string(kPoint) +
           "compiled_tensors { source_name: \"w\" value { type: 0 raw_data: \"abcd\" } device: 0 "
           "source_digest: \"" +
           digest + "\" digest_algorithm: \"" + alg + "\" }";
  };
  const std::string d32(32, 'a'), d31(31, 'a'), d33(33, 'a');
  EXPECT_TRUE(check_text(with("blake3", d32)).valid());
  EXPECT_TRUE(check_text(with("sha256", d32)).valid());
  for (const auto& alg : {"blake3", "sha256"}) {
    for (const auto& d : {d31, d33}) {
      CheckReport r = check_text(with(alg, d));
      EXPECT_EQ(count_rule(r.errors, rules::kDigestLength), 1) << alg << " " << d.size();
    }
  }
  // Names are matched exactly: "BLAKE3" is an unknown algorithm, a warning.
  CheckReport r = check_text(with("BLAKE3", d31));
  EXPECT_TRUE(r.valid());
  EXPECT_EQ(count_rule(r.warnings, rules::kUnknownAlgorithm), 1);
}

TEST(CheckModel, ArchitectureGrammarIsAWarningNeverAnError) {
  for (const char* arch :
       {"x86_64-avx2-fma", "x86_64-v4-avx512vnni", "aarch64-neon-dotprod", "x86_64-amx-int8"}) {
    CheckReport r =
        check_text(std::string("devices { type: \"cpu\" architecture: \"") + arch + "\" }");
    EXPECT_TRUE(r.valid());
    EXPECT_TRUE(r.warnings.empty()) << arch;
  }
  for (const char* arch : {"x86-64", "AVX2", "riscv64-v"}) {
    CheckReport r =
        check_text(std::string("devices { type: \"cpu\" architecture: \"") + arch + "\" }");
    EXPECT_TRUE(r.valid());
    EXPECT_EQ(count_rule(r.warnings, rules::kUnknownArchitecture), 1) << arch;
  }
  CheckReport cuda = check_text("devices { type: \"cuda\" architecture: \"sm_80\" }");
  EXPECT_TRUE(cuda.warnings.empty());
}

TEST(CheckModel, ExternalPayloads) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("payload.bin"), std::string(12, 'z'));
  auto ext = [](const std::string& offset, const std::string& length) {
    return std::string(kPoint) +
           compiled(
               "type: 0 external_data { key: \"location\" value: \"payload.bin\" } "
               "external_data { key: \"offset\" value: \"" +
               offset +
               "\" } "
               "external_data { key: \"length\" value: \"" +
               length + "\" }");
  };
  EXPECT_TRUE(check_text(ext("8", "4"), {}, dir.path()).valid());
  CheckReport mismatch = check_text(ext("0", "8"), {}, dir.path());
  EXPECT_EQ(count_rule(mismatch.errors, rules::kSizeMismatch), 1);
  CheckReport past_end = check_text(ext("10", "4"), {}, dir.path());
  EXPECT_EQ(count_rule(past_end.errors, rules::kValueExternalData), 1);
  CheckOptions no_io;
  no_io.check_external_payloads = false;
  EXPECT_TRUE(check_text(ext("10", "4"), no_io, dir.path()).valid());
}

TEST(CheckModel, DiamondReferencesStayLinear) {
  // 60 levels, each a structure of two fields referencing the level below:
  // 2^60 paths if walked naively, one memoised visit per entry here. The leaf
  // count (2^60) is over the limit and reported once at each root above it.
  std::string text;
  for (int i = 0; i < 60; ++i) {
    std::string elem = i == 59 ? "tensor_type { elem_type: 2 }"
                               : "struct_type { type_index: " + std::to_string(i + 1) + " }";
    text += "struct_types { name: \"D" + std::to_string(i) +
            "\" structure { field { name: \"a\" type { " + elem +
            " } } field { name: \"b\" type { " + elem + " } } } }\n";
  }
  CheckReport r = check_text(text);
  EXPECT_GT(count_rule(r.errors, rules::kLimitLeaves), 0);
  EXPECT_EQ(count_rule(r.errors, rules::kSizeOverflow), 0);
  EXPECT_EQ(count_rule(r.errors, rules::kLimitNestingDepth), 0);
}

TEST(CheckModel, LongReferenceChainsHitTheDepthLimitWithoutRecursingDeeply) {
  std::string text;
  const int n = 5000;
  for (int i = 0; i < n; ++i) {
    std::string elem = i == n - 1 ? "tensor_type { elem_type: 1 }"
                                  : "struct_type { type_index: " + std::to_string(i + 1) + " }";
    text += "struct_types { name: \"C" + std::to_string(i) + "\" array { element_type { " + elem +
            " } dimension: 1 } }\n";
  }
  CheckReport r = check_text(text);
  // Entries 0 .. n-65 nest deeper than 64; the last 64 are fine.
  EXPECT_EQ(count_rule(r.errors, rules::kLimitNestingDepth), n - 64);
}

// A valid portable model is never rejected: every model of Debian's
// libonnx-testdata passes (the CLI acceptance test repeats this end to end).
TEST(CheckModel, LibonnxTestdataModelsAreValid) {
  const std::string root = "/usr/share/libonnx-testdata/data";
  ASSERT_TRUE(std::filesystem::exists(root)) << root << " is not installed: run tools/setup.sh";
  int count = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().filename() != "model.onnx") continue;
    auto model = format::Model::load(e.path().string());
    ASSERT_TRUE(model.ok()) << e.path() << ": " << model.status().message();
    CheckReport r = check_model(**model);
    EXPECT_TRUE(r.valid()) << e.path();
    ++count;
  }
  EXPECT_GT(count, 100);
}

}  // namespace
}  // namespace onnx_prepack::check
