// Persisted ConvInteger and QLinearConv W packs (the i8_gemm_b family's
// i8_conv_w formats) through the CLI, on a quantize_dynamic-form CNN
// (tests/runtime/quant/make_quantize_dynamic_cnn.py: DynamicQuantizeLinear ->
// ConvInteger (uint8 and int8 W, 3x3 and 1x1, group 1 and 3) -> Cast -> Mul):
// `compile` writes one entry per W, explain and a run map every one (hits),
// the compiled run's output is bitwise the source model's (misses packed now)
// and the plain one's (kernel-owned packs), and a flipped payload byte is a
// corrupt_payload miss of that weight only with the output still bitwise equal.
// The same, without the corruption, on a QOperator-form CNN
// (tests/runtime/quant/make_qlinear_cnn.py: QuantizeLinear -> QLinearConv
// x 6 -> DequantizeLinear, one of them depthwise and so not persisted, one of group 3).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

bool python_available() {
  std::string out;
  return testing::run_command("/usr/bin/python3 -c 'import onnx, numpy'", &out) == 0;
}

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The "weights" of a `run --json` / `explain --json` document (python3 reads
// it: the project has no JSON parser) as "name decision reason format" lines.
std::vector<std::string> decisions(const testing::TempDir& dir, const std::string& json) {
  std::ofstream(dir.file("doc.json")) << json;
  std::string out;
  EXPECT_EQ(testing::run_command("/usr/bin/python3 -c \"import json,sys; "
                                 "[print(w['name'], w['decision'], w['reason'] or '-', "
                                 "w.get('format') or '-') "
                                 "for w in json.load(open(sys.argv[1]))['weights']]\" " +
                                     dir.file("doc.json"),
                                 &out),
            0)
      << out;
  std::vector<std::string> lines;
  std::istringstream ss(out);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

std::string data_file_of(const testing::TempDir& dir, const std::string& model) {
  for (const auto& e : fs::directory_iterator(dir.path())) {
    const std::string n = e.path().filename().string();
    if (n.rfind(model + ".", 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".data") {
      return e.path().string();
    }
  }
  return "";
}

const std::vector<std::string> kHits = {"w0 hit - u8_conv_w_panel16", "w1 hit - i8_conv_w_panel16",
                                        "w2 hit - i8_conv_w_panel16", "w3 hit - u8_conv_w_panel16",
                                        "w4 hit - u8_conv_w_grouped_panel16"};

TEST(ConvIntegerPack, CompiledEntriesAreHitsBitwiseEqualToMisses) {
  if (!python_available()) GTEST_SKIP() << "python3-onnx missing";
  testing::TempDir dir;
  const std::string cli = "timeout 120 " + std::string(OP_CLI_PATH);
  std::string log;
  ASSERT_EQ(
      testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                               "/tests/runtime/quant/make_quantize_dynamic_cnn.py " + dir.path(),
                           &log),
      0)
      << log;
  const std::string plain = dir.file("model.onnx"), compiled = dir.file("c.onnx");
  const std::string in = " --input x=" + dir.file("x.npy") + " --memo-dir " + dir.file("memo");

  ASSERT_EQ(testing::run_command(cli + " compile " + plain + " -o " + compiled, &log), 0) << log;
  EXPECT_NE(log.find("compiled 5 entries"), std::string::npos) << log;
  ASSERT_EQ(testing::run_command(cli + " check " + compiled, &log), 0) << log;
  ASSERT_EQ(testing::run_command(cli + " explain " + compiled + " --json", &log), 0) << log;
  EXPECT_EQ(decisions(dir, log), kHits) << log;

  ASSERT_EQ(testing::run_command(cli + " run " + compiled + in +
                                     " --cache off --json --output-dir " + dir.file("hit"),
                                 &log),
            0)
      << log;
  EXPECT_EQ(decisions(dir, log), kHits) << log;
  ASSERT_EQ(testing::run_command(
                cli + " run " + plain + in + " --cache off --json --output-dir " + dir.file("miss"),
                &log),
            0)
      << log;
  EXPECT_EQ(decisions(dir, log),
            (std::vector<std::string>{
                "w0 miss not_found u8_conv_w_panel16", "w1 miss not_found i8_conv_w_panel16",
                "w2 miss not_found i8_conv_w_panel16", "w3 miss not_found u8_conv_w_panel16",
                "w4 miss not_found u8_conv_w_grouped_panel16"}))
      << log;
  ASSERT_EQ(
      testing::run_command(
          cli + " run " + plain + in + " --weights plain --output-dir " + dir.file("plain"), &log),
      0)
      << log;
  const std::string want = slurp(dir.file("miss/y.npy"));
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(slurp(dir.file("hit/y.npy")), want) << "hits != misses";
  EXPECT_EQ(slurp(dir.file("plain/y.npy")), want) << "kernel-owned packs != misses";

  // Every kernel reads the one format: a capped host hits the same entries, same bits.
  ASSERT_EQ(testing::run_command("ONNX_PREPACK_MAX_ISA=ref " + cli + " run " + compiled + in +
                                     " --cache off --json --output-dir " + dir.file("ref"),
                                 &log),
            0)
      << log;
  EXPECT_EQ(decisions(dir, log), kHits) << log;
  EXPECT_EQ(slurp(dir.file("ref/y.npy")), want);

  // A flipped byte inside w0's payload (payloads are written first, in entry
  // order): under the default policy (full) a corrupt_payload miss, repacked.
  const std::string data = data_file_of(dir, "c.onnx");
  ASSERT_FALSE(data.empty());
  {
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(100);
    char c = 0;
    f.read(&c, 1);
    c = char(c ^ 0x5a);
    f.seekp(100);
    f.write(&c, 1);
  }
  ASSERT_EQ(testing::run_command(cli + " run " + compiled + in + " --cache off --json " +
                                     "--output-dir " + dir.file("corrupt"),
                                 &log),
            0)
      << log;
  EXPECT_EQ(decisions(dir, log),
            (std::vector<std::string>{"w0 miss corrupt_payload u8_conv_w_panel16", kHits[1],
                                      kHits[2], kHits[3], kHits[4]}))
      << log;
  EXPECT_EQ(slurp(dir.file("corrupt/y.npy")), want) << "a repacked miss != the source's";
}

const std::vector<std::string> kQHits = {"q0 hit - u8_conv_w_panel16", "q1 hit - i8_conv_w_panel16",
                                         "q2 hit - i8_conv_w_panel16", "q4 hit - u8_conv_w_panel16",
                                         "q5 hit - i8_conv_w_grouped_panel16"};

TEST(QLinearConvPack, CompiledEntriesAreHitsBitwiseEqualToMissesAndPlain) {
  if (!python_available()) GTEST_SKIP() << "python3-onnx missing";
  testing::TempDir dir;
  const std::string cli = "timeout 120 " + std::string(OP_CLI_PATH);
  std::string log;
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + std::string(OP_SOURCE_DIR) +
                                     "/tests/runtime/quant/make_qlinear_cnn.py " + dir.path(),
                                 &log),
            0)
      << log;
  const std::string plain = dir.file("model.onnx"), compiled = dir.file("c.onnx");
  const std::string in = " --input x=" + dir.file("x.npy") + " --memo-dir " + dir.file("memo");

  ASSERT_EQ(testing::run_command(cli + " compile " + plain + " -o " + compiled, &log), 0) << log;
  EXPECT_NE(log.find("compiled 5 entries"), std::string::npos) << log;
  ASSERT_EQ(testing::run_command(cli + " check " + compiled, &log), 0) << log;
  ASSERT_EQ(testing::run_command(cli + " explain " + compiled + " --json", &log), 0) << log;
  EXPECT_EQ(decisions(dir, log), kQHits) << log;

  ASSERT_EQ(testing::run_command(cli + " run " + compiled + in +
                                     " --cache off --json --output-dir " + dir.file("hit"),
                                 &log),
            0)
      << log;
  EXPECT_EQ(decisions(dir, log), kQHits) << log;
  ASSERT_EQ(testing::run_command(
                cli + " run " + plain + in + " --cache off --json --output-dir " + dir.file("miss"),
                &log),
            0)
      << log;
  EXPECT_EQ(decisions(dir, log),
            (std::vector<std::string>{
                "q0 miss not_found u8_conv_w_panel16", "q1 miss not_found i8_conv_w_panel16",
                "q2 miss not_found i8_conv_w_panel16", "q4 miss not_found u8_conv_w_panel16",
                "q5 miss not_found i8_conv_w_grouped_panel16"}))
      << log;
  ASSERT_EQ(
      testing::run_command(
          cli + " run " + plain + in + " --weights plain --output-dir " + dir.file("plain"), &log),
      0)
      << log;
  const std::string want = slurp(dir.file("miss/y.npy"));
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(slurp(dir.file("hit/y.npy")), want) << "hits != misses";
  EXPECT_EQ(slurp(dir.file("plain/y.npy")), want) << "kernel-owned packs != misses";
  ASSERT_EQ(testing::run_command("ONNX_PREPACK_MAX_ISA=ref " + cli + " run " + compiled + in +
                                     " --cache off --json --output-dir " + dir.file("ref"),
                                 &log),
            0)
      << log;
  EXPECT_EQ(decisions(dir, log), kQHits) << log;
  EXPECT_EQ(slurp(dir.file("ref/y.npy")), want) << "capped at ref != the host's kernels";
}

}  // namespace
}  // namespace onnx_prepack::runtime
