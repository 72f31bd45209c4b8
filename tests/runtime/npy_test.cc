// .npy files of every numeric type numpy writes are read with their values,
// written back byte for byte, and 16-/8-bit float inputs take their raw bits.
#include "runtime/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>

#include "testing/test_models.h"

namespace onnx_prepack::runtime {
namespace {

bool numpy_available() {
  std::string out;
  return testing::run_command("/usr/bin/python3 -c 'import numpy'", &out) == 0;
}

TEST(Npy, ReadsEveryNumericTypeNumpyWrites) {
  if (!numpy_available()) GTEST_SKIP() << "python3 numpy not available";
  testing::TempDir dir;
  // Each file holds [0, 1, 2, 3, 4, 5] as shape (2, 3) in its type; the
  // scalar and the empty array check the shape parser.
  struct Case {
    const char* np;
    int32_t dtype;
  };
  const Case cases[] = {{"float32", kFloat}, {"float64", kDouble}, {"float16", kFloat16},
                        {"int8", kInt8},     {"int16", kInt16},    {"int32", kInt32},
                        {"int64", kInt64},   {"uint8", kUint8},    {"uint16", kUint16},
                        {"uint32", kUint32}, {"uint64", kUint64},  {"bool_", kBool}};
  std::string script = "import numpy as np\n";
  for (const Case& c : cases) {
    script += "np.save('" + dir.file(std::string(c.np) + ".npy") +
              "', np.arange(6).reshape(2, 3).astype(np." + c.np + "))\n";
  }
  script += "np.save('" + dir.file("scalar.npy") + "', np.float32(2.5))\n";
  script += "np.save('" + dir.file("empty.npy") + "', np.zeros((0, 4), np.int64))\n";
  testing::write_bytes(dir.file("make.py"), script);
  std::string log;
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + dir.file("make.py"), &log), 0) << log;
  for (const Case& c : cases) {
    auto t = read_npy(dir.file(std::string(c.np) + ".npy"));
    ASSERT_TRUE(t.ok()) << c.np << ": " << t.status().message();
    EXPECT_EQ(t->dtype(), c.dtype) << c.np;
    EXPECT_EQ(t->shape(), (Shape{2, 3})) << c.np;
    for (int64_t i = 0; i < 6; ++i) {
      double v;
      switch (c.dtype) {
        case kFloat:
          v = t->as<float>()[i];
          break;
        case kDouble:
          v = t->as<double>()[i];
          break;
        case kFloat16:
          v = half_to_float(t->as<uint16_t>()[i]);
          break;
        case kInt8:
          v = t->as<int8_t>()[i];
          break;
        case kInt16:
          v = t->as<int16_t>()[i];
          break;
        case kInt32:
          v = t->as<int32_t>()[i];
          break;
        case kInt64:
          v = double(t->as<int64_t>()[i]);
          break;
        case kUint8:
          v = t->as<uint8_t>()[i];
          break;
        case kUint16:
          v = t->as<uint16_t>()[i];
          break;
        case kUint32:
          v = t->as<uint32_t>()[i];
          break;
        case kUint64:
          v = double(t->as<uint64_t>()[i]);
          break;
        default:
          v = t->as<bool>()[i] ? 1 : 0;
      }
      EXPECT_EQ(v, c.dtype == kBool ? (i != 0) : double(i)) << c.np << " element " << i;
    }
    // Written back, numpy's bytes after the header are ours.
    std::string ours = encode_npy(t->view());
    std::string theirs = testing::read_bytes(dir.file(std::string(c.np) + ".npy"));
    EXPECT_EQ(ours.substr(ours.size() - t->nbytes()), theirs.substr(theirs.size() - t->nbytes()));
    auto again = parse_npy(ours, "re-encoded");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->dtype(), c.dtype);
  }
  auto s = read_npy(dir.file("scalar.npy"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->shape(), Shape{});
  EXPECT_EQ(s->as<float>()[0], 2.5f);
  auto e = read_npy(dir.file("empty.npy"));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->shape(), (Shape{0, 4}));
}

TEST(Npy, NarrowFloatInputsTakeTheirBits) {
  if (!numpy_available()) GTEST_SKIP() << "python3 numpy not available";
  testing::TempDir dir;
  // bfloat16 1.5 = 0x3fc0; float8 e4m3fn 1.5 = 0x3c; ml_dtypes saves them as void.
  std::string script =
      "import numpy as np\n"
      "np.save('" +
      dir.file("bits16.npy") +
      "', np.array([0x3fc0, 0xbf80], np.uint16))\n"
      "np.save('" +
      dir.file("void16.npy") +
      "', np.array([0x3fc0, 0xbf80], np.uint16).view('V2'))\n"
      "np.save('" +
      dir.file("void8.npy") + "', np.array([0x3c, 0xb8], np.uint8).view('V1'))\n";
  testing::write_bytes(dir.file("make.py"), script);
  std::string log;
  ASSERT_EQ(testing::run_command("/usr/bin/python3 " + dir.file("make.py"), &log), 0) << log;
  for (const char* f : {"bits16.npy", "void16.npy"}) {
    auto t = read_npy_as(dir.file(f), kBfloat16);
    ASSERT_TRUE(t.ok()) << f << ": " << t.status().message();
    EXPECT_EQ(t->dtype(), kBfloat16) << f;
    EXPECT_EQ(bfloat16_to_float(t->as<uint16_t>()[0]), 1.5f) << f;
    EXPECT_EQ(bfloat16_to_float(t->as<uint16_t>()[1]), -1.0f) << f;
  }
  auto f8 = read_npy_as(dir.file("void8.npy"), kFloat8E5M2);
  ASSERT_TRUE(f8.ok()) << f8.status().message();
  EXPECT_EQ(f8->dtype(), kFloat8E5M2);
  // A uint16 file stays uint16 for a float input: the session names the mismatch.
  auto plain = read_npy_as(dir.file("bits16.npy"), kFloat);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->dtype(), kUint16);
  // Our bfloat16 output holds its bit patterns as uint16 (plain numpy reads it;
  // docs/cli.md), and reads back as bfloat16 for a bfloat16 input.
  HostTensor b = HostTensor::allocate(kBfloat16, {2});
  EXPECT_NE(encode_npy(b.view()).find("'descr': '<u2'"), std::string::npos);
}

}  // namespace
}  // namespace onnx_prepack::runtime

namespace onnx_prepack::runtime {
namespace {

// An 8 GiB (sparse) file whose header is wrong, or whose size does not match
// its header, fails at once: the header is checked before anything is read
// or allocated.
TEST(Npy, HeaderIsCheckedBeforeTheDataIsRead) {
  testing::TempDir dir;
  const std::string path = dir.file("big.npy");
  const uint64_t size = uint64_t(8) << 30;
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  dict.append(128 - 10 - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string valid = std::string("\x93NUMPY\x01\x00", 8);
  valid.push_back(char(dict.size() & 0xff));
  valid.push_back(char(dict.size() >> 8));
  valid += dict;  // a [3] float header: 12 data bytes, not 8 GiB
  for (const std::string& head : {std::string("NOTNUMPY"), valid}) {
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f.write(head.data(), std::streamsize(head.size()));
    }
    ASSERT_EQ(::truncate(path.c_str(), off_t(size)), 0);
    const auto t0 = std::chrono::steady_clock::now();
    Result<HostTensor> r = read_npy(path);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
    EXPECT_LT(s, 1.0);
  }
}

}  // namespace
}  // namespace onnx_prepack::runtime
