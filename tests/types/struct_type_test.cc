#include "types/struct_type.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cstring>

#include "types/codec.h"
#include "types/constant.h"

namespace onnx_prepack::types {
namespace {

onnx::ModelProto parse(const std::string& text) {
  onnx::ModelProto m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

std::span<const uint8_t> bytes_of(const std::vector<uint8_t>& v) { return {v.data(), v.size()}; }

TEST(CopyBits, MatchesABitByBitReference) {
  std::vector<uint8_t> src(16);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 37 + 11);
  auto bit = [](const uint8_t* p, uint64_t i) { return (p[i / 8] >> (i % 8)) & 1; };
  for (uint64_t s = 0; s < 20; ++s) {
    for (uint64_t d = 0; d < 12; ++d) {
      for (uint64_t n = 0; n <= 70; n += 7) {
        std::vector<uint8_t> dst(16, 0xA5), want(16, 0xA5);
        copy_bits(src.data(), s, dst.data(), d, n);
        for (uint64_t i = 0; i < n; ++i) {
          uint8_t& w = want[(d + i) / 8];
          w = uint8_t((w & ~(1u << ((d + i) % 8))) | (bit(src.data(), s + i) << ((d + i) % 8)));
        }
        ASSERT_EQ(dst, want) << s << " " << d << " " << n;
      }
    }
  }
}

TEST(StructReader, PackedComponentsAreExtractedLsbFirst) {
  auto m = parse(R"pb(
    struct_types {
      name: "BITS"
      dims_param: "n"
      packed_array {
        component { name: "a" bit_width: 3 }
        component { name: "b" bit_width: 5 }
        component { name: "c" bit_width: 9 }
        component { name: "d" bit_width: 7 }
        dims_index: 0
      }
    }
  )pb");
  // Element i: a=i%8, b=(3*i)%32, c=(100+i)%512, d=(5*i)%128; 24 bits each.
  const uint64_t n = 5;
  std::vector<uint8_t> payload(n * 3, 0);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t v = uint32_t(i % 8) | uint32_t((3 * i) % 32) << 3 | uint32_t((100 + i) % 512) << 8 |
                 uint32_t((5 * i) % 128) << 17;
    for (int b = 0; b < 3; ++b) payload[i * 3 + b] = uint8_t(v >> (8 * b));
  }
  uint64_t dims[] = {n};
  auto leaves = read_leaves(m.struct_types(), m.struct_types(0), dims, bytes_of(payload));
  ASSERT_TRUE(leaves.ok()) << leaves.status().message();
  ASSERT_EQ(leaves->size(), 4u);
  EXPECT_EQ((*leaves)[2].name, "c");
  EXPECT_EQ((*leaves)[2].elem_type, onnx::TensorProto::UINT16);
  EXPECT_EQ((*leaves)[0].elem_type, onnx::TensorProto::UINT8);
  for (uint64_t i = 0; i < n; ++i) {
    EXPECT_EQ((*leaves)[0].data[i], i % 8);
    EXPECT_EQ((*leaves)[1].data[i], (3 * i) % 32);
    uint16_t c;
    std::memcpy(&c, &(*leaves)[2].data[i * 2], 2);
    EXPECT_EQ(c, (100 + i) % 512);
    EXPECT_EQ((*leaves)[3].data[i], (5 * i) % 128);
  }
}

TEST(StructReader, MultiByteLeavesAtUnalignedOffsets) {
  // {flag: 1-bit component, v: FLOAT, h: INT4} repeated 3 times: 37 bits each,
  // 111 bits in all -> pad with a 1-bit component to 112 = 14 bytes.
  auto m = parse(R"pb(
    struct_types {
      name: "FLAG"
      packed_array {
        component { name: "flag" bit_width: 1 }
        dimension: 1
      }
    }
    struct_types {
      name: "REC"
      structure {
        field {
          name: "f"
          type { struct_type { type_index: 0 } }
        }
        field {
          name: "v"
          type { tensor_type { elem_type: 1 } }
        }
        field {
          name: "h"
          type { tensor_type { elem_type: 22 } }
        }
      }
    }
    struct_types {
      name: "RECS"
      structure {
        field {
          name: "r"
          type {
            struct_type {
              array {
                element_type { struct_type { type_index: 1 } }
                dimension: 3
              }
            }
          }
        }
        field {
          name: "pad"
          type { struct_type { type_index: 0 } }
        }
      }
    }
  )pb");
  const float values[3] = {1.5f, -2.25f, 3e10f};
  const uint8_t nibbles[3] = {0x7, 0x8, 0xF};
  std::vector<uint8_t> payload(14, 0);
  uint64_t at = 0;
  for (int i = 0; i < 3; ++i) {
    uint8_t flag = uint8_t(i & 1);
    copy_bits(&flag, 0, payload.data(), at, 1);
    copy_bits(reinterpret_cast<const uint8_t*>(&values[i]), 0, payload.data(), at + 1, 32);
    copy_bits(&nibbles[i], 0, payload.data(), at + 33, 4);
    at += 37;
  }
  auto leaves = read_leaves(m.struct_types(), m.struct_types(2), {}, bytes_of(payload));
  ASSERT_TRUE(leaves.ok()) << leaves.status().message();
  ASSERT_EQ(leaves->size(), 4u);
  EXPECT_EQ((*leaves)[0].name, "r.f.flag");
  EXPECT_EQ((*leaves)[0].dims, (std::vector<uint64_t>{3, 1}));
  EXPECT_EQ((*leaves)[1].name, "r.v");
  EXPECT_EQ((*leaves)[1].dims, (std::vector<uint64_t>{3}));
  float got[3];
  std::memcpy(got, (*leaves)[1].data.data(), 12);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got[i], values[i]);
  // INT4 canonical form: two per byte, first element in the low nibble.
  EXPECT_EQ((*leaves)[2].name, "r.h");
  EXPECT_EQ((*leaves)[2].data, (std::vector<uint8_t>{0x87, 0x0F}));
  EXPECT_EQ((*leaves)[3].name, "pad.flag");
}

TEST(StructReader, ConstantsAreAttached) {
  auto m = parse(R"pb(
    struct_types {
      name: "Q"
      structure {
        field {
          name: "zero_point"
          constant { data_type: 3 dims: 2 int32_data: -1 int32_data: 5 }
        }
        field {
          name: "q"
          type { tensor_type { elem_type: 2 } }
        }
      }
    }
  )pb");
  std::vector<uint8_t> payload = {42};
  auto leaves = read_leaves(m.struct_types(), m.struct_types(0), {}, bytes_of(payload));
  ASSERT_TRUE(leaves.ok()) << leaves.status().message();
  ASSERT_EQ(leaves->size(), 2u);
  EXPECT_EQ((*leaves)[0].constant, &m.struct_types(0).structure().field(0).constant());
  EXPECT_EQ((*leaves)[0].dims, (std::vector<uint64_t>{2}));
  EXPECT_EQ((*leaves)[0].data, (std::vector<uint8_t>{0xFF, 0x05}));
  EXPECT_EQ((*leaves)[1].data, (std::vector<uint8_t>{42}));
}

TEST(StructReader, RejectsAPayloadOfTheWrongLength) {
  auto m = parse(R"pb(struct_types {
                        name: "F"
                        array {
                          element_type { tensor_type { elem_type: 1 } }
                          dimension: 4
                        }
                      })pb");
  std::vector<uint8_t> payload(15);
  auto leaves = read_leaves(m.struct_types(), m.struct_types(0), {}, bytes_of(payload));
  ASSERT_FALSE(leaves.ok());
  EXPECT_NE(leaves.status().message().find("payload is 15 bytes"), std::string::npos);
}

TEST(StructTypeBits, ErrorsNameTheProblem) {
  auto m = parse(R"pb(
    struct_types {
      name: "A"
      structure {
        field {
          name: "b"
          type { struct_type { type_index: 1 } }
        }
      }
    }
    struct_types {
      name: "B"
      structure {
        field {
          name: "a"
          type { struct_type { type_index: 0 } }
        }
      }
    }
    struct_types {
      name: "BIG"
      array {
        element_type { tensor_type { elem_type: 15 } }
        dimension: 1152921504606846976
      }
    }
    struct_types {
      name: "N"
      dims_param: "n"
      array {
        element_type { tensor_type { elem_type: 1 } }
        dims_index: 0
      }
    }
    struct_types {
      name: "UNSET"
      array { element_type { tensor_type { elem_type: 1 } } }
    }
  )pb");
  auto cyc = struct_type_bits(m.struct_types(), m.struct_types(0), {});
  ASSERT_FALSE(cyc.ok());
  EXPECT_NE(cyc.status().message().find("cycle"), std::string::npos);
  auto big = struct_type_bits(m.struct_types(), m.struct_types(2), {});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("overflows"), std::string::npos);
  uint64_t d[] = {7};
  EXPECT_EQ(*struct_type_bits(m.struct_types(), m.struct_types(3), d), 224u);
  EXPECT_FALSE(struct_type_bits(m.struct_types(), m.struct_types(3), {}).ok());  // dims missing
  EXPECT_FALSE(struct_type_bits(m.struct_types(), m.struct_types(4), {}).ok());
  EXPECT_EQ(static_byte_size(m, m.struct_types(3)), std::nullopt);
  EXPECT_EQ(static_byte_size(m, m.struct_types(0)), std::nullopt);
}

TEST(LeafSignature, KeepsParametersSymbolic) {
  auto m = parse(R"pb(
    struct_types {
      name: "P"
      structure {
        field {
          name: "x"
          type { tensor_type { elem_type: 1 } }
        }
      }
    }
    struct_types {
      name: "G"
      dims_param: "r"
      dims_param: "c"
      array {
        element_type {
          struct_type {
            array {
              element_type { struct_type { type_index: 0 } }
              dims_index: 1
            }
          }
        }
        dims_index: 0
      }
    }
  )pb");
  auto leaves = leaf_signature(m.struct_types(), m.struct_types(1));
  ASSERT_TRUE(leaves.ok()) << leaves.status().message();
  ASSERT_EQ(leaves->size(), 1u);
  EXPECT_EQ((*leaves)[0].dims, (std::vector<LeafDim>{{0, 0}, {0, 1}}));
  auto shape = type_shape(m.struct_types(), m.struct_types(1));
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->height, 3u);
}

TEST(Codec, AllowListIsDefaultDomainAndDeterministic) {
  EXPECT_TRUE(codec_operator_allowed("", "Cast"));
  EXPECT_TRUE(codec_operator_allowed("ai.onnx", "Mul"));
  EXPECT_FALSE(codec_operator_allowed("com.microsoft", "Cast"));
  EXPECT_FALSE(codec_operator_allowed("", "RandomUniform"));
  EXPECT_FALSE(codec_operator_allowed("", "Loop"));
  EXPECT_FALSE(codec_operator_allowed("", "Dropout"));
}

TEST(Constant, SizesAndCanonicalBytes) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT4);
  t.add_dims(3);
  t.add_int32_data(0x21);
  t.add_int32_data(0x03);
  EXPECT_EQ(*constant_byte_size(t), 2u);
  EXPECT_EQ(*constant_bytes(t), (std::vector<uint8_t>{0x21, 0x03}));
  t.add_dims(-1);
  EXPECT_FALSE(constant_byte_size(t).ok());
}

}  // namespace
}  // namespace onnx_prepack::types
