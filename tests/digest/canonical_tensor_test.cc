// Canonical tensor digest (format.md §5): one digest per tensor whatever its storage, vectors per
// element type (also in docs/digest.md), b3sum of the canonical message, and the errors.
#include "digest/canonical_tensor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "base/json.h"
#include "digest/digest.h"
#include "format/data_type.h"
#include "testing/test_models.h"

namespace onnx_prepack::digest {
namespace {

using onnx::TensorProto;

std::string hex(std::span<const uint8_t> b) { return base::hex_lower(b.data(), b.size()); }

// One test tensor per element type: dims and canonical content.
struct TypeCase {
  int32_t type;
  std::vector<int64_t> dims;
  std::vector<uint8_t> content;
};

std::vector<uint8_t> pattern_bytes(size_t n, uint8_t mul, uint8_t add) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * mul + add);
  return v;
}

std::vector<TypeCase> type_cases() {
  std::vector<TypeCase> cases;
  for (int32_t t = 1; t <= format::kMaxDataType; ++t) {
    if (t == TensorProto::STRING) continue;
    TypeCase c{t, {2, 3}, {}};
    const uint32_t bits = format::data_type_bits(t);
    if (bits < 8) c.dims = {5};  // odd count: the final byte has unused high bits
    const uint64_t count = *format::element_count(c.dims.data(), int(c.dims.size()));
    const uint64_t bytes = *format::raw_byte_size(t, count);
    c.content = pattern_bytes(bytes, 37, 11);
    if (t == TensorProto::BOOL) c.content = {1, 0, 0, 1, 1, 0};
    if (bits == 4) c.content.back() &= 0x0F;
    if (bits == 2) c.content.back() &= 0x03;  // 5 elements: 2 bits used in byte 1
    cases.push_back(c);
  }
  return cases;
}

TensorProto raw_tensor(const TypeCase& c) {
  TensorProto t;
  t.set_name("t");
  t.set_data_type(c.type);
  for (auto d : c.dims) t.add_dims(d);
  t.set_raw_data(std::string(c.content.begin(), c.content.end()));
  return t;
}

// The same tensor in its typed field, as ONNX writers store it.
TensorProto typed_tensor(const TypeCase& c) {
  TensorProto t;
  t.set_name("t");
  t.set_data_type(c.type);
  for (auto d : c.dims) t.add_dims(d);
  const uint8_t* p = c.content.data();
  const size_t n = c.content.size();
  switch (c.type) {
    case TensorProto::FLOAT:
    case TensorProto::COMPLEX64:
      for (size_t i = 0; i < n; i += 4) {
        float f;
        std::memcpy(&f, p + i, 4);
        t.add_float_data(f);
      }
      break;
    case TensorProto::DOUBLE:
    case TensorProto::COMPLEX128:
      for (size_t i = 0; i < n; i += 8) {
        double d;
        std::memcpy(&d, p + i, 8);
        t.add_double_data(d);
      }
      break;
    case TensorProto::INT64:
      for (size_t i = 0; i < n; i += 8) {
        int64_t v;
        std::memcpy(&v, p + i, 8);
        t.add_int64_data(v);
      }
      break;
    case TensorProto::UINT64:
      for (size_t i = 0; i < n; i += 8) {
        uint64_t v;
        std::memcpy(&v, p + i, 8);
        t.add_uint64_data(v);
      }
      break;
    case TensorProto::UINT32:
      for (size_t i = 0; i < n; i += 4) {
        uint32_t v;
        std::memcpy(&v, p + i, 4);
        t.add_uint64_data(v);
      }
      break;
    case TensorProto::INT32:
      for (size_t i = 0; i < n; i += 4) {
        int32_t v;
        std::memcpy(&v, p + i, 4);
        t.add_int32_data(v);
      }
      break;
    case TensorProto::INT16:
      for (size_t i = 0; i < n; i += 2) {
        int16_t v;
        std::memcpy(&v, p + i, 2);
        t.add_int32_data(v);
      }
      break;
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      for (size_t i = 0; i < n; i += 2) {
        uint16_t v;
        std::memcpy(&v, p + i, 2);
        t.add_int32_data(v);
      }
      break;
    case TensorProto::INT8:
      for (size_t i = 0; i < n; ++i) t.add_int32_data(int8_t(p[i]));
      break;
    default:  // UINT8, BOOL, float8, packed 4-bit and 2-bit bytes
      for (size_t i = 0; i < n; ++i) t.add_int32_data(p[i]);
      break;
  }
  return t;
}

// The tensor in external data at offset 4096 of `dir`/w<type>.bin (a model maps each
// location once, so every case gets its own file).
TensorProto external_tensor(const TypeCase& c, const testing::TempDir& dir) {
  const std::string name = "w" + std::to_string(c.type) + ".bin";
  std::string file(4096, '\x5a');
  file.append(c.content.begin(), c.content.end());
  file.append("trailing bytes");
  testing::write_bytes(dir.file(name), file);
  TensorProto t;
  t.set_name("t");
  t.set_data_type(c.type);
  for (auto d : c.dims) t.add_dims(d);
  t.set_data_location(TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", name);
  add("offset", "4096");
  add("length", std::to_string(c.content.size()));
  return t;
}

Result<TensorDigest> digest_of(const format::Model& m, const TensorProto& t,
                               Algorithm a = Algorithm::kBlake3, base::ThreadPool* pool = nullptr) {
  return digest_tensor(m, t, "initializers[0] 't'", {a, pool});
}

std::vector<uint8_t> message_of(const format::Model& m, const TensorProto& t) {
  VectorSink sink;
  auto r = write_canonical_tensor(m, t, "t", sink);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return sink.bytes();
}

// Published vectors (docs/digest.md): BLAKE3 and SHA-256 of each type case.
const std::map<int32_t, std::pair<std::string, std::string>>& expected_vectors() {
  static const std::map<int32_t, std::pair<std::string, std::string>> v = {
#include "canonical_vectors.inc"
  };
  return v;
}

TEST(CanonicalHeader, Layout) {
  const std::vector<int64_t> dims = {2, 3};
  const std::vector<uint8_t> h = canonical_header(TensorProto::FLOAT, dims);
  ASSERT_EQ(h.size(), 22u + 4 + 4 + 16);
  EXPECT_EQ(std::string(h.begin(), h.begin() + 22), std::string("onnx-tensor-digest-v1\0", 22));
  EXPECT_EQ(hex({h.data() + 22, h.size() - 22}),
            "01000000"
            "02000000"
            "0200000000000000"
            "0300000000000000");
}

TEST(CanonicalDigest, SameDigestRawTypedExternalForEveryType) {
  testing::TempDir dir;
  auto model = format::Model::from_proto(onnx::ModelProto(), dir.path());
  for (const TypeCase& c : type_cases()) {
    SCOPED_TRACE(std::string(format::data_type_name(c.type)));
    auto raw = digest_of(*model, raw_tensor(c));
    auto typed = digest_of(*model, typed_tensor(c));
    auto ext = digest_of(*model, external_tensor(c, dir));
    ASSERT_TRUE(raw.ok()) << raw.status().message();
    ASSERT_TRUE(typed.ok()) << typed.status().message();
    ASSERT_TRUE(ext.ok()) << ext.status().message();
    EXPECT_EQ(raw->content_bytes, c.content.size());
    EXPECT_EQ(hex(raw->digest), hex(typed->digest));
    EXPECT_EQ(hex(raw->digest), hex(ext->digest));
    // The message is header + content, byte for byte.
    std::vector<uint8_t> want = canonical_header(c.type, c.dims);
    want.insert(want.end(), c.content.begin(), c.content.end());
    EXPECT_EQ(message_of(*model, typed_tensor(c)), want);
    EXPECT_EQ(message_of(*model, external_tensor(c, dir)), want);
    for (Algorithm a : {Algorithm::kBlake3, Algorithm::kSha256}) {
      std::span<const uint8_t> parts[] = {want};
      EXPECT_EQ(hex(digest_of(*model, typed_tensor(c), a)->digest), hex(hash_bytes(a, parts)));
    }
  }
}

TEST(CanonicalDigest, PublishedVectorsPerElementType) {
  auto model = format::Model::from_proto(onnx::ModelProto(), ".");
  std::string listing;
  for (const TypeCase& c : type_cases()) {
    const std::string b3 = hex(digest_of(*model, raw_tensor(c))->digest);
    const std::string sha = hex(digest_of(*model, raw_tensor(c), Algorithm::kSha256)->digest);
    listing += "{" + std::to_string(c.type) + ", {\"" + b3 + "\", \"" + sha + "\"}}, // " +
               std::string(format::data_type_name(c.type)) + " content " + hex(c.content) + "\n";
    auto it = expected_vectors().find(c.type);
    if (it == expected_vectors().end()) {
      ADD_FAILURE() << "no published vector for " << format::data_type_name(c.type);
      continue;
    }
    EXPECT_EQ(b3, it->second.first) << format::data_type_name(c.type);
    EXPECT_EQ(sha, it->second.second) << format::data_type_name(c.type);
  }
  if (HasFailure()) std::printf("%s", listing.c_str());
}

TensorProto string_tensor(const std::vector<std::string>& values, std::vector<int64_t> dims) {
  TensorProto t;
  t.set_data_type(TensorProto::STRING);
  for (auto d : dims) t.add_dims(d);
  for (const auto& s : values) t.add_string_data(s);
  return t;
}

TEST(CanonicalDigest, PublishedVectorsStringEmptyScalar) {
  auto model = format::Model::from_proto(onnx::ModelProto(), ".");
  TensorProto empty;
  empty.set_data_type(TensorProto::FLOAT);
  empty.add_dims(0);
  empty.add_dims(4);
  const TensorProto scalar = testing::float_tensor("s", {}, {1.0f}, false);
  const struct {
    TensorProto t;
    const char* blake3;
    const char* sha256;
  } cases[] = {
      {string_tensor({"ab", "", "xyz"}, {3}),
       "41649ec435926a4f16f86606bdcb6f9a3979e5de01af7a9889597f16b3e68a13",
       "754d68e4ee297d7d15f0e3e0ce08d8069c07a3ee02431ef6f482c9d5500a58f6"},
      {empty, "b6a44a02aad5c9ed7344cefaa5af09815d0003d63f438d8b7f063765e9c70d56",
       "ca87c4f270241ee80638fa764440ce724a83cf3a386df57f3f22e89017f59440"},
      {scalar, "55e0c903ac86deb8efec49570f38038091729225baba19cbeb03be6c9e3433b3",
       "f8365eed26be7350ded7df4e8cdda3ede3826a346638102019f85a5abb22b3b9"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(hex(digest_of(*model, c.t)->digest), c.blake3);
    EXPECT_EQ(hex(digest_of(*model, c.t, Algorithm::kSha256)->digest), c.sha256);
  }
}

TEST(CanonicalDigest, StringTensorsArePrefixedByLength) {
  auto model = format::Model::from_proto(onnx::ModelProto(), ".");
  const TensorProto t = string_tensor({"ab", "", "xyz"}, {3});
  std::vector<uint8_t> want = canonical_header(TensorProto::STRING, std::vector<int64_t>{3});
  const char content[] = "\x02\0\0\0\0\0\0\0ab\0\0\0\0\0\0\0\0\x03\0\0\0\0\0\0\0xyz";
  want.insert(want.end(), content, content + sizeof content - 1);
  EXPECT_EQ(message_of(*model, t), want);
  auto d = digest_of(*model, t);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->content_bytes, 8u + 2 + 8 + 0 + 8 + 3);
  std::span<const uint8_t> parts[] = {want};
  EXPECT_EQ(hex(d->digest), hex(hash_bytes(Algorithm::kBlake3, parts)));
  // A large string goes through the sink directly and still matches.
  const std::string big(200 * 1024, 'q');
  const TensorProto b = string_tensor({"a", big, "b"}, {3});
  std::vector<uint8_t> m = message_of(*model, b);
  EXPECT_EQ(m.size(), want.size() - (8 + 2 + 8 + 8 + 3) + 3 * 8 + 1 + big.size() + 1);
}

TEST(CanonicalDigest, SubByteRawPaddingBitsAreIgnored) {
  auto model = format::Model::from_proto(onnx::ModelProto(), ".");
  for (int32_t type : {int32_t(TensorProto::INT4), int32_t(TensorProto::UINT2)}) {
    TypeCase c{type, {5}, {}};
    c.content = type == TensorProto::INT4 ? std::vector<uint8_t>{0x21, 0x43, 0x05}
                                          : std::vector<uint8_t>{0xE4, 0x02};
    TypeCase dirty = c;
    dirty.content.back() |= type == TensorProto::INT4 ? 0xF0 : 0xFC;
    EXPECT_EQ(hex(digest_of(*model, raw_tensor(c))->digest),
              hex(digest_of(*model, raw_tensor(dirty))->digest));
    EXPECT_EQ(hex(digest_of(*model, raw_tensor(c))->digest),
              hex(digest_of(*model, typed_tensor(dirty))->digest));
  }
}

TEST(CanonicalDigest, LargeTypedTensorsStreamAndMatchRawForAnyThreadCount) {
  auto model = format::Model::from_proto(onnx::ModelProto(), ".");
  const std::vector<float> values = testing::pseudo_random_floats(3 * 1024 * 1024 + 7, 5);
  const TensorProto raw = testing::float_tensor("w", {int64_t(values.size())}, values, true);
  const TensorProto typed = testing::float_tensor("w", {int64_t(values.size())}, values, false);
  const std::string want = hex(digest_of(*model, raw)->digest);
  for (size_t threads : {1, 2, 3}) {
    base::ThreadPool pool(threads);
    EXPECT_EQ(hex(digest_of(*model, typed, Algorithm::kBlake3, &pool)->digest), want);
    EXPECT_EQ(hex(digest_of(*model, raw, Algorithm::kBlake3, &pool)->digest), want);
  }
  // Narrowing conversion in pieces: 300k FLOAT16 values in int32_data.
  TypeCase c{TensorProto::FLOAT16, {300001}, pattern_bytes(600002, 13, 7)};
  EXPECT_EQ(hex(digest_of(*model, raw_tensor(c))->digest),
            hex(digest_of(*model, typed_tensor(c))->digest));
}

TEST(CanonicalDigest, MatchesB3sumOfTheCanonicalMessage) {
  std::string out;
  ASSERT_EQ(testing::run_command("b3sum --version", &out), 0)
      << "b3sum is a required peer: run tools/setup.sh";
  testing::TempDir dir;
  auto model = format::Model::from_proto(onnx::ModelProto(), dir.path());
  const std::vector<float> values = testing::pseudo_random_floats(70000, 9);
  const TensorProto t = testing::float_tensor("w", {350, 200}, values, false);
  const std::vector<uint8_t> msg = message_of(*model, t);
  testing::write_bytes(dir.file("msg.bin"), std::string(msg.begin(), msg.end()));
  ASSERT_EQ(testing::run_command("b3sum --no-names " + dir.file("msg.bin"), &out), 0) << out;
  EXPECT_EQ(out.substr(0, 64), hex(digest_of(*model, t)->digest));
  ASSERT_EQ(testing::run_command("sha256sum " + dir.file("msg.bin"), &out), 0) << out;
  EXPECT_EQ(out.substr(0, 64), hex(digest_of(*model, t, Algorithm::kSha256)->digest));
}

TEST(CanonicalDigest, ConstantNodeTensor) {
  onnx::ModelProto p;
  auto* n = p.mutable_graph()->add_node();
  n->set_op_type("Constant");
  n->add_output("c");
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = testing::float_tensor("c", {2}, {1.0f, 2.0f}, false);
  auto model = format::Model::from_proto(p, ".");
  auto consts = model->constant_tensors();
  ASSERT_EQ(consts.size(), 1u);
  auto d = digest_tensor(*model, *consts[0].tensor, "node[0] 'c'");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(hex(d->digest),
            hex(digest_of(*model, testing::float_tensor("x", {2}, {1.0f, 2.0f}, true))->digest));
}

void expect_error(const format::Model& m, const TensorProto& t, const std::string& fragment) {
  auto d = digest_of(m, t);
  ASSERT_FALSE(d.ok()) << "expected an error containing '" << fragment << "'";
  EXPECT_NE(d.status().message().find("initializers[0] 't'"), std::string::npos)
      << d.status().message();
  EXPECT_NE(d.status().message().find(fragment), std::string::npos) << d.status().message();
}

TEST(CanonicalDigest, ErrorsNameTheTensorAndTheRule) {
  testing::TempDir dir;
  auto model = format::Model::from_proto(onnx::ModelProto(), dir.path());
  TensorProto t = testing::float_tensor("t", {2, 3}, {1, 2, 3, 4, 5, 6}, true);

  TensorProto neg = t;
  neg.set_dims(1, -3);
  expect_error(*model, neg, "dims[1] is -3");

  TensorProto seg = t;
  seg.mutable_segment()->set_begin(0);
  seg.mutable_segment()->set_end(3);
  expect_error(*model, seg, "segmented tensor");

  TensorProto short_raw = t;
  short_raw.mutable_raw_data()->resize(20);
  expect_error(*model, short_raw, "raw_data is 20 bytes, dims [2, 3] of FLOAT need 24");

  TensorProto typed = testing::float_tensor("t", {2, 3}, {1, 2, 3, 4, 5}, false);
  expect_error(*model, typed, "float_data has 5 values, dims [2, 3] of FLOAT need 6");

  TensorProto wrong_field = t;
  wrong_field.clear_raw_data();
  for (int i = 0; i < 6; ++i) wrong_field.add_int32_data(i);
  expect_error(*model, wrong_field, "FLOAT data must be in float_data, found int32_data");

  TensorProto both = t;
  both.add_float_data(1.0f);
  expect_error(*model, both, "raw_data and also float_data");

  TensorProto none = t;
  none.clear_raw_data();
  expect_error(*model, none, "holds no data");

  TensorProto unknown = t;
  unknown.set_data_type(99);
  expect_error(*model, unknown, "data_type 99 is not a known element type");
  unknown.set_data_type(0);
  expect_error(*model, unknown, "data_type 0");

  TensorProto int8 = t;
  int8.clear_raw_data();
  int8.set_data_type(TensorProto::INT8);
  for (int v : {1, 2, 300, 4, 5, 6}) int8.add_int32_data(v);
  expect_error(*model, int8, "int32_data[2] is 300, out of range for INT8 [-128, 127]");

  TensorProto boolean = int8;
  boolean.set_data_type(TensorProto::BOOL);
  expect_error(*model, boolean, "int32_data[1] is 2, out of range for BOOL [0, 1]");

  TensorProto u32;
  u32.set_data_type(TensorProto::UINT32);
  u32.add_dims(1);
  u32.add_uint64_data(uint64_t(1) << 33);
  expect_error(*model, u32, "uint64_data[0] is 8589934592, out of range for UINT32");

  TensorProto int4;
  int4.set_data_type(TensorProto::INT4);
  int4.add_dims(5);
  for (int v : {1, 2, 3, 4, 5}) int4.add_int32_data(v);  // one per element: not packed
  expect_error(*model, int4, "int32_data has 5 values, dims [5] of INT4 need 3");

  TensorProto str = string_tensor({"a"}, {2});
  expect_error(*model, str, "string_data has 1 values, dims [2] of STRING need 2");
  TensorProto str_raw = str;
  str_raw.clear_string_data();
  str_raw.set_raw_data("ab");
  expect_error(*model, str_raw, "STRING tensor keeps its elements in string_data");

  TensorProto huge = t;
  huge.clear_dims();
  for (int i = 0; i < 4; ++i) huge.add_dims(int64_t(1) << 20);
  expect_error(*model, huge, "overflows 64 bits");

  TypeCase c{TensorProto::FLOAT, {2, 3}, pattern_bytes(24, 1, 0)};
  TensorProto ext = external_tensor(c, dir);
  ext.mutable_external_data(2)->set_value("4000");
  expect_error(*model, ext, "is past the end of 'w1.bin'");
  TensorProto ext_len = external_tensor(c, dir);
  ext_len.mutable_external_data(2)->set_value("20");
  expect_error(*model, ext_len, "external data is 20 bytes, dims [2, 3] of FLOAT need 24");
  TensorProto ext_missing = external_tensor(c, dir);
  ext_missing.mutable_external_data(0)->set_value("missing.bin");
  expect_error(*model, ext_missing, "missing.bin");
  TensorProto ext_raw = external_tensor(c, dir);
  ext_raw.set_raw_data("abcd");
  expect_error(*model, ext_raw, "external data and also raw_data");
}

TEST(CanonicalDigest, EmptyTensors) {
  auto model = format::Model::from_proto(onnx::ModelProto(), ".");
  TensorProto t;
  t.set_data_type(TensorProto::FLOAT);
  t.add_dims(0);
  t.add_dims(4);
  auto d = digest_of(*model, t);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->content_bytes, 0u);
  const std::vector<uint8_t> header =
      canonical_header(TensorProto::FLOAT, std::vector<int64_t>{0, 4});
  std::span<const uint8_t> parts[] = {header};
  EXPECT_EQ(hex(d->digest), hex(hash_bytes(Algorithm::kBlake3, parts)));
  t.set_raw_data("");
  EXPECT_EQ(hex(digest_of(*model, t)->digest), hex(d->digest));
}

TEST(DigestApi, AlgorithmNamesAndKnownHashes) {
  EXPECT_EQ(algorithm_from_name("blake3"), Algorithm::kBlake3);
  EXPECT_EQ(algorithm_from_name("sha256"), Algorithm::kSha256);
  EXPECT_FALSE(algorithm_from_name("BLAKE3").has_value());
  EXPECT_FALSE(algorithm_from_name("sha-256").has_value());
  EXPECT_EQ(algorithm_name(Algorithm::kBlake3), "blake3");
  EXPECT_EQ(algorithm_name(Algorithm::kSha256), "sha256");
  EXPECT_EQ(hex(hash_bytes(Algorithm::kBlake3, {})),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
  const uint8_t abc[] = {'a', 'b', 'c'};
  const uint8_t a[] = {'a'}, bc[] = {'b', 'c'};
  std::span<const uint8_t> whole[] = {abc};
  std::span<const uint8_t> split[] = {a, {}, bc};
  EXPECT_EQ(hex(hash_bytes(Algorithm::kSha256, whole)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(hash_bytes(Algorithm::kSha256, split)), hex(hash_bytes(Algorithm::kSha256, whole)));
  EXPECT_EQ(hex(hash_bytes(Algorithm::kBlake3, split)), hex(hash_bytes(Algorithm::kBlake3, whole)));
}

}  // namespace
}  // namespace onnx_prepack::digest
