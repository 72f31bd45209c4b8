// Lineage-bound MatMulNBits packs through the CLI (format.md §4.5): `compile` writes
// one entry per weight with its lineage; a run maps every one; editing one
// scale makes exactly that weight a stale_digest miss naming the role, the
// others stay hits, and the outputs agree with ONNX Runtime on the edited
// model; hits are bitwise equal to misses.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "device/cpu_features.h"
#include "runtime/npy.h"
#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

namespace fs = std::filesystem;

bool tools_available() {
  std::string out;
  return fs::exists(std::string(OP_PEERS_DIR) + "/onnxruntime-node") &&
         testing::run_command("node --version", &out) == 0 &&
         testing::run_command("/usr/bin/python3 -c 'import onnx, numpy'", &out) == 0;
}

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `run --json` weight decisions (read with python3: the project has no JSON
// parser) as "name decision reason detail" lines.
std::vector<std::string> decisions(const testing::TempDir& dir, const std::string& json) {
  std::ofstream(dir.file("run.json")) << json;
  std::string out;
  EXPECT_EQ(testing::run_command("/usr/bin/python3 -c \"import json,sys; "
                                 "[print(w['name'], w['decision'], w['reason'], w['detail']) "
                                 "for w in json.load(open(sys.argv[1]))['weights']]\" " +
                                     dir.file("run.json"),
                                 &out),
            0)
      << out;
  std::vector<std::string> lines;
  std::istringstream ss(out);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

TEST(MatMulNBitsLineage, EditedScaleIsAStaleMissOfThatWeightOnly) {
  if (!tools_available()) GTEST_SKIP() << "node, onnxruntime-node or python3-onnx missing";
  if (device::host_isa_level() == device::IsaLevel::kRef) {
    GTEST_SKIP() << "no packed format runs natively on this host (compile --target host refuses)";
  }
  testing::TempDir dir;
  const std::string src = std::string(OP_SOURCE_DIR) + "/tests/runtime/quant/";
  const std::string cli = OP_CLI_PATH;
  std::string log;
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + src + "make_matmul_nbits.py " + dir.path() +
                                     " --K 300 --N 300 --M 2 --layers 3 --bias --level 4",
                                 &log),
            0)
      << log;
  const std::string plain = dir.file("model.onnx"), compiled = dir.file("c.onnx");
  const std::string edited = dir.file("edited.onnx"), in = " --input a=" + dir.file("a.npy");
  ASSERT_EQ(testing::run_command(cli + " compile " + plain + " -o " + compiled, &log), 0) << log;
  ASSERT_EQ(testing::run_command(cli + " check " + compiled, &log), 0) << log;

  ASSERT_EQ(testing::run_command(cli + " run " + compiled + in +
                                     " --cache off --json --output-dir " + dir.file("hit"),
                                 &log),
            0)
      << log;
  for (const std::string& d : decisions(dir, log))
    EXPECT_NE(d.find(" hit "), std::string::npos) << d;
  ASSERT_EQ(testing::run_command(
                cli + " run " + plain + in + " --cache off --output-dir " + dir.file("miss"), &log),
            0)
      << log;
  EXPECT_EQ(slurp(dir.file("hit/y.npy")), slurp(dir.file("miss/y.npy"))) << "hit != miss";

  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + src + "edit_initializer.py " + compiled +
                                     " " + edited + " w1_scales 5 1.5",
                                 &log),
            0)
      << log;
  ASSERT_EQ(testing::run_command(cli + " run " + edited + in + " --cache off --json --output-dir " +
                                     dir.file("edited_out"),
                                 &log),
            0)
      << log;
  const auto ds = decisions(dir, log);
  ASSERT_EQ(ds.size(), 3u) << log;
  EXPECT_EQ(ds[0].substr(0, 9), "w0_B hit ");
  EXPECT_EQ(ds[1].substr(0, 23), "w1_B miss stale_digest ") << ds[1];
  EXPECT_NE(ds[1].find("role scales ('w1_scales')"), std::string::npos) << ds[1];
  EXPECT_EQ(ds[2].substr(0, 9), "w2_B hit ");

  // The edited model's outputs are ONNX Runtime's (level 4: A quantized alike).
  ASSERT_EQ(
      testing::run_command("node " + std::string(OP_SOURCE_DIR) + "/tests/runtime/ort_run.js " +
                               edited + " " + dir.file("ort") + " a=" + dir.file("a.npy"),
                           &log),
      0)
      << log;
  auto got = read_npy(dir.file("edited_out/y.npy"));
  auto want = read_npy(dir.file("ort/y.npy"));
  ASSERT_TRUE(got.ok() && want.ok());
  ASSERT_EQ(got->shape(), want->shape());
  double mx = 0, worst = 0;
  for (int64_t i = 0; i < want->numel(); ++i) {
    mx = std::max(mx, double(std::fabs(want->as<float>()[i])));
    worst = std::max(worst, std::fabs(double(got->as<float>()[i]) - want->as<float>()[i]));
  }
  EXPECT_LE(worst, 1e-4 * mx);
  auto before = read_npy(dir.file("hit/y.npy"));
  ASSERT_TRUE(before.ok());
  EXPECT_NE(slurp(dir.file("hit/y.npy")), slurp(dir.file("edited_out/y.npy")))
      << "the edited scale must change the output";
}

}  // namespace
}  // namespace onnx_prepack::runtime
