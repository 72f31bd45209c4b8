// Resolver: one test per miss reason (format.md §4.3), preference (§6), the
// verification policies (§7.2) and the cache-store fallback (§7.1).
#include "resolve/resolver.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "format/model_writer.h"
#include "resolve/resolve_fixture.h"

namespace onnx_prepack::resolve {
namespace {

using namespace testing_fixture;
using onnx_prepack::testing::TempDir;

onnx::ModelProto base_model() { return onnx_prepack::testing::make_mlp(8, 16, 4, 7); }

Resolution resolve_one(const onnx::ModelProto& m, const PackRequest& req, ResolverOptions opts = {},
                       device::HostDescription h = host()) {
  auto model = format::Model::from_proto(m, "");
  Resolver r(*model, h, opts);
  return r.resolve(req);
}

void expect_miss(const onnx::ModelProto& m, MissReason reason,
                 const PackRequest& req = request("W1"), ResolverOptions opts = {},
                 device::HostDescription h = host()) {
  Resolution res = resolve_one(m, req, opts, h);
  EXPECT_FALSE(res.is_hit());
  EXPECT_EQ(miss_reason_id(res.reason), miss_reason_id(reason)) << res.detail;
  EXPECT_FALSE(res.detail.empty());
}

TEST(Resolver, HitReturnsPayloadAndDims) {
  onnx::ModelProto m = base_model();
  add_entry(m, {});
  auto model = format::Model::from_proto(m, "");
  Resolver r(*model, host(), {});
  Resolution res = r.resolve(request("W1"));
  ASSERT_TRUE(res.is_hit()) << miss_reason_id(res.reason) << ": " << res.detail;
  EXPECT_EQ(res.hit->entry, 0);
  EXPECT_EQ(res.hit->format_index, 0);
  ASSERT_EQ(res.hit->dims.size(), 1u);
  EXPECT_EQ(res.hit->dims[0], 8u * 16u);
  EXPECT_EQ(res.hit->payload.size(), 8u * 16u * 4u);
  EXPECT_EQ(std::memcmp(res.hit->payload.data(), find_init(m, "W1")->raw_data().data(), 512), 0);
  EXPECT_EQ(res.hit->type->name(), kFormat);
  EXPECT_TRUE(res.verified);
  EXPECT_EQ(res.bytes_hashed, 1024u);  // source and payload (format.md §4.6)
  EXPECT_EQ(res.bytes_mapped, 512u);
  EXPECT_EQ(res.bytes_to_pack, 0u);
  ASSERT_EQ(res.candidates.size(), 1u);
  EXPECT_TRUE(res.candidates[0].chosen);
  EXPECT_EQ(r.totals().hits, 1u);
}

TEST(Resolver, ExternalPayloadIsMappedNotCopied) {
  TempDir dir;
  onnx::ModelProto m = base_model();
  add_entry(m, {});
  format::WriteOptions wo;
  wo.payload_threshold = 0;
  ASSERT_TRUE(format::write_model(m, dir.file("m.onnx"), wo, nullptr).ok());
  auto model = format::Model::load(dir.file("m.onnx")).value();
  Resolver r(*model, host(), {});
  Resolution res = r.resolve(request("W1"));
  ASSERT_TRUE(res.is_hit()) << res.detail;
  EXPECT_TRUE(res.hit->payload_external);
  auto file = std::static_pointer_cast<const base::MappedFile>(res.hit->keep_alive);
  ASSERT_NE(file, nullptr);
  const uint8_t* begin = file->bytes().data();
  EXPECT_GE(res.hit->payload.data(), begin);
  EXPECT_LE(res.hit->payload.data() + res.hit->payload.size(), begin + file->bytes().size());
  EXPECT_EQ((res.hit->payload.data() - begin) % 4096, 0);
}

TEST(Resolver, NotFoundWithoutEntry) {
  onnx::ModelProto m = base_model();
  expect_miss(m, MissReason::kNotFound);
  expect_miss(m, MissReason::kNotFound, request("no_such_weight"));
}

TEST(Resolver, DuplicateSourceName) {
  onnx::ModelProto m = base_model();
  add_entry(m, {});
  *m.mutable_graph()->add_initializer() = *find_init(m, "W1");
  expect_miss(m, MissReason::kDuplicateSource);
}

TEST(Resolver, OverriddenByFedInput) {
  onnx::ModelProto m = base_model();
  add_entry(m, {});
  ResolverOptions opts;
  opts.fed_inputs.insert("W1");
  expect_miss(m, MissReason::kOverriddenByInput, request("W1"), opts);
  opts.fed_inputs = {"W2"};
  EXPECT_TRUE(resolve_one(m, request("W1"), opts).is_hit());
}

TEST(Resolver, BadDeviceIndex) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.device_index = 5;
  add_entry(m, e);
  expect_miss(m, MissReason::kBadDeviceIndex);
}

TEST(Resolver, ArchitectureTheHostLacks) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.architecture = "x86_64-avx512f-avx512bw";
  add_entry(m, e);
  expect_miss(m, MissReason::kIncompatibleDevice, request("W1"), {}, host("x86_64-v3"));
  EXPECT_TRUE(resolve_one(m, request("W1"), {}, host("x86_64-v4")).is_hit());
}

TEST(Resolver, OtherMachineTypeAndUnknownFeature) {
  for (std::string arch : {"aarch64-neon", "x86_64-avx2-quantumfoo", "X86_64"}) {
    onnx::ModelProto m = base_model();
    EntrySpec e;
    e.architecture = arch;
    add_entry(m, e);
    expect_miss(m, MissReason::kIncompatibleDevice);
  }
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.device_type = "cuda";
  e.architecture = "sm_90";
  add_entry(m, e);
  expect_miss(m, MissReason::kIncompatibleDevice);
}

TEST(Resolver, FormatRequiredIsaMissing) {
  onnx::ModelProto m = base_model();
  add_entry(m, {});
  expect_miss(m, MissReason::kIncompatibleDevice,
              request("W1", {acceptable(kFormat, kFormatVersion, "x86_64-avx512f")}), {},
              host("x86_64-v3"));
}

// An entry for another machine listed before one for this machine that the host
// cannot run: all are incompatible_device, and the weight's miss is the one that
// got further, naming the missing feature, not the other machine (the
// multi-target file of tools/test_aarch64.sh: x86_64 then aarch64-dotprod
// MatMulNBits entries read on a NEON-only aarch64). The device's architecture
// lacking a feature, then the format's kernel needing one (after the device and
// format rules passed); a stale entry still outranks both.
TEST(Resolver, MissNamesTheMissingIsaOverAnotherMachinesEntry) {
  onnx::ModelProto m = base_model();
  EntrySpec other;
  other.architecture = "aarch64-neon";
  add_entry(m, other);
  EntrySpec wide;
  wide.architecture = "x86_64-avx512f";
  add_entry(m, wide);
  Resolution res = resolve_one(m, request("W1"), {}, host("x86_64-v3"));
  ASSERT_FALSE(res.is_hit());
  ASSERT_EQ(res.candidates.size(), 2u);
  EXPECT_EQ(res.candidates[0].reason, MissReason::kIncompatibleDevice);
  EXPECT_EQ(res.candidates[1].reason, MissReason::kIncompatibleDevice);
  EXPECT_EQ(res.reason, MissReason::kIncompatibleDevice);
  EXPECT_NE(res.detail.find("devices[1]"), std::string::npos) << res.detail;
  EXPECT_NE(res.detail.find("lacks avx512f"), std::string::npos) << res.detail;

  add_entry(m, {});  // x86_64: the device matches, the format needs avx512bw
  res = resolve_one(m, request("W1", {acceptable(kFormat, kFormatVersion, "x86_64-avx512bw")}), {},
                    host("x86_64-v3"));
  ASSERT_FALSE(res.is_hit());
  EXPECT_EQ(res.reason, MissReason::kIncompatibleDevice);
  EXPECT_NE(res.detail.find("format 'test_f32_copy' needs"), std::string::npos) << res.detail;
  EXPECT_NE(res.detail.find("avx512bw"), std::string::npos) << res.detail;

  EntrySpec stale;
  stale.stale = true;
  stale.format = "fmt_b";
  add_entry(m, stale);
  res = resolve_one(
      m,
      request("W1", {acceptable(kFormat, kFormatVersion, "x86_64-avx512bw"), acceptable("fmt_b")}),
      {}, host("x86_64-v3"));
  EXPECT_EQ(res.reason, MissReason::kStaleDigest) << res.detail;
}

TEST(Resolver, UnknownRuntime) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.runtime = "onnxruntime";
  add_entry(m, e);
  expect_miss(m, MissReason::kUnknownRuntime);
}

TEST(Resolver, RuntimeVersion) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.runtime_version = "2";
  add_entry(m, e);
  expect_miss(m, MissReason::kRuntimeVersion);
}

TEST(Resolver, RequiredMetadataNotUnderstood) {
  onnx::ModelProto m = base_model();
  add_entry(m, {});
  auto* kv = m.mutable_devices(0)->add_metadata_props();
  kv->set_key("required.cache_line");
  kv->set_value("128");
  expect_miss(m, MissReason::kUnknownMetadata);
}

TEST(Resolver, UnknownFormat) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.format = "some_other_layout";
  add_entry(m, e);
  expect_miss(m, MissReason::kUnknownFormat);
}

TEST(Resolver, FormatVersion) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.format_version = "2";
  add_entry(m, e);
  expect_miss(m, MissReason::kFormatVersion);
}

TEST(Resolver, FormatRejectsDims) {
  onnx::ModelProto m = base_model();
  add_entry(m, {});
  AcceptableFormat f = acceptable();
  f.check_dims = [](const onnx::TensorProto&, const onnx::StructTypeProto&,
                    std::span<const uint64_t> dims) -> Status {
    return invalid_argument("dims[0] is " + std::to_string(dims[0]) + ", expected 7");
  };
  expect_miss(m, MissReason::kFormatMismatch, request("W1", {f}));
}

TEST(Resolver, UnknownDigestAlgorithm) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.algorithm = "md5";
  add_entry(m, e);
  expect_miss(m, MissReason::kUnknownAlgorithm);
}

TEST(Resolver, Sha256EntryHits) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.algorithm = "sha256";
  add_entry(m, e);
  EXPECT_TRUE(resolve_one(m, request("W1")).is_hit());
}

TEST(Resolver, WrongPayloadSizeIsInvalidEntry) {
  for (int delta : {-4, 4}) {
    onnx::ModelProto m = base_model();
    EntrySpec e;
    e.payload_delta = delta;
    add_entry(m, e);
    expect_miss(m, MissReason::kInvalidEntry);
  }
}

TEST(Resolver, CheckerErrorsAreIgnoredNotFatal) {
  onnx::ModelProto m = base_model();
  add_entry(m, {});
  EntrySpec bad;
  bad.source = "W2";
  bad.payload_delta = -4;
  add_entry(m, bad);
  auto model = format::Model::from_proto(m, "");
  Resolver r(*model, host(), {});
  EXPECT_FALSE(r.diagnostics().empty());
  EXPECT_TRUE(r.resolve(request("W1")).is_hit());
  Resolution res = r.resolve(request("W2"));
  EXPECT_EQ(res.reason, MissReason::kInvalidEntry);
  EXPECT_NE(res.detail.find("compiled_tensors[1]"), std::string::npos) << res.detail;
}

TEST(Resolver, StaleDigest) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.stale = true;
  add_entry(m, e);
  expect_miss(m, MissReason::kStaleDigest);
}

TEST(Resolver, PreferenceFollowsFormatOrderThenEarliestEntry) {
  onnx::ModelProto m = base_model();
  EntrySpec a;
  a.format = "fmt_a";
  add_entry(m, a);
  EntrySpec b;
  b.format = "fmt_b";
  b.fill_offset = 1.0f;
  add_entry(m, b);
  EntrySpec b2;
  b2.format = "fmt_b";
  b2.architecture = "x86_64-avx2";
  b2.fill_offset = 2.0f;
  add_entry(m, b2);
  Resolution res = resolve_one(m, request("W1", {acceptable("fmt_b"), acceptable("fmt_a")}));
  ASSERT_TRUE(res.is_hit());
  EXPECT_EQ(res.hit->entry, 1);
  EXPECT_EQ(res.candidates[0].reason, MissReason::kNotPreferred);
  EXPECT_EQ(res.candidates[2].reason, MissReason::kNotPreferred);
  res = resolve_one(m, request("W1", {acceptable("fmt_a"), acceptable("fmt_b")}));
  ASSERT_TRUE(res.is_hit());
  EXPECT_EQ(res.hit->entry, 0);
}

TEST(Resolver, StaleBestEntryFallsBackToNextFormat) {
  onnx::ModelProto m = base_model();
  EntrySpec a;
  a.format = "fmt_a";
  add_entry(m, a);
  EntrySpec b;
  b.format = "fmt_b";
  b.stale = true;
  add_entry(m, b);
  Resolution res = resolve_one(m, request("W1", {acceptable("fmt_b"), acceptable("fmt_a")}));
  ASSERT_TRUE(res.is_hit());
  EXPECT_EQ(res.hit->entry, 0);
  EXPECT_EQ(res.candidates[1].reason, MissReason::kStaleDigest);
}

TEST(Resolver, VerifyOffHashesNothing) {
  onnx::ModelProto m = base_model();
  EntrySpec e;
  e.stale = true;
  add_entry(m, e);
  ResolverOptions opts;
  opts.verify = VerifyPolicy::kOff;
  Resolution res = resolve_one(m, request("W1"), opts);
  EXPECT_TRUE(res.is_hit());  // the documented risk of `off`
  EXPECT_FALSE(res.verified);
  EXPECT_EQ(res.bytes_hashed, 0u);
  EXPECT_EQ(res.policy, VerifyPolicy::kOff);
}

TEST(Resolver, MissReportsBytesToPack) {
  onnx::ModelProto m = base_model();
  Resolution res = resolve_one(m, request("W2"));
  EXPECT_EQ(res.bytes_to_pack, 16u * 4u * 4u);
}

// format.md §4.3 rule 2 with a model edited by onnx's own Python package, which keeps
// our unknown (extension) fields: the edited weight misses, the other hits.
TEST(Resolver, StaleDigestAfterPythonOnnxEdit) {
  TempDir dir;
  onnx::ModelProto m = base_model();
  add_entry(m, {});
  EntrySpec w2;
  w2.source = "W2";
  add_entry(m, w2);
  ASSERT_TRUE(format::write_model_inline(m, dir.file("in.onnx")).ok());
  const std::string script = dir.file("edit.py");
  std::ofstream(script) << "import sys, onnx\n"
                           "from onnx import numpy_helper\n"
                           "m = onnx.load(sys.argv[1])\n"
                           "for t in m.graph.initializer:\n"
                           "    if t.name == 'W1':\n"
                           "        a = numpy_helper.to_array(t).copy()\n"
                           "        a.flat[3] += 1.0\n"
                           "        t.CopyFrom(numpy_helper.from_array(a, 'W1'))\n"
                           "onnx.save(m, sys.argv[2])\n";
  std::string out;
  ASSERT_EQ(onnx_prepack::testing::run_command("/usr/bin/python3 " + script + " " +
                                                   dir.file("in.onnx") + " " + dir.file("out.onnx"),
                                               &out),
            0)
      << out;
  auto model = format::Model::load(dir.file("out.onnx")).value();
  ASSERT_EQ(model->proto().compiled_tensors_size(), 2) << "python onnx dropped unknown fields";
  Resolver r(*model, host(), {});
  Resolution r1 = r.resolve(request("W1"));
  EXPECT_EQ(r1.reason, MissReason::kStaleDigest) << r1.detail;
  EXPECT_FALSE(r1.is_hit());
  EXPECT_TRUE(r.resolve(request("W2")).is_hit());
}

TEST(Resolver, CacheStoreWriteBackThenHit) {
  TempDir dir;
  onnx::ModelProto m = base_model();
  auto model = format::Model::from_proto(m, "");
  auto store = CacheStore::open(dir.file("store"), CacheMode::kReadWrite).value();
  ResolverOptions opts;
  opts.cache = store.get();
  const onnx::TensorProto* w1 = find_init(m, "W1");
  {
    Resolver r(*model, host(), opts);
    Resolution res = r.resolve(request("W1"));
    ASSERT_FALSE(res.is_hit());
    EXPECT_EQ(res.reason, MissReason::kNotFound);
    const uint64_t dims[] = {128};
    ASSERT_TRUE(r.store(request("W1"), acceptable(), identity_type(kFormat, kFormatVersion), dims,
                        {reinterpret_cast<const uint8_t*>(w1->raw_data().data()), 512})
                    .ok());
  }
  Resolver r(*model, host(), opts);
  Resolution res = r.resolve(request("W1"));
  ASSERT_TRUE(res.is_hit()) << res.detail;
  EXPECT_EQ(res.hit->entry, -1);
  EXPECT_FALSE(res.hit->cache_path.empty());
  EXPECT_EQ(std::memcmp(res.hit->payload.data(), w1->raw_data().data(), 512), 0);
  // Read-only: found but never written; off: not consulted.
  auto ro = CacheStore::open(dir.file("store"), CacheMode::kReadOnly).value();
  opts.cache = ro.get();
  EXPECT_TRUE(Resolver(*model, host(), opts).resolve(request("W1")).is_hit());
  EXPECT_TRUE(
      Resolver(*model, host(), opts)
          .store(request("W2"), acceptable(), identity_type(kFormat, kFormatVersion), {}, {})
          .ok());  // a no-op
  EXPECT_EQ(ro->entry_ids()->size(), 1u);
  auto off = CacheStore::open(dir.file("store"), CacheMode::kOff).value();
  opts.cache = off.get();
  EXPECT_FALSE(Resolver(*model, host(), opts).resolve(request("W1")).is_hit());
}

}  // namespace
}  // namespace onnx_prepack::resolve

namespace onnx_prepack::resolve {
namespace {

using namespace testing_fixture;
using onnx_prepack::testing::TempDir;

// resolver_prefetch.cc hashes every entry's source and payload on the pool
// before the rules run: decisions, reasons and the bytes each resolution
// reports must be those of hashing on demand, one tensor at a time.
TEST(Resolver, HashingAheadOnThePoolDecidesAsHashingOnDemand) {
  onnx::ModelProto m = onnx_prepack::testing::make_mlp(8, 16, 4, 7);
  add_entry(m, {});                // W1: intact
  add_entry(m, {.source = "W2"});  // W2: payload flipped below
  std::string* raw = m.mutable_compiled_tensors(1)->mutable_value()->mutable_raw_data();
  (*raw)[5] ^= 0x10;
  TempDir dir;
  const std::string path = dir.file("m.onnx");
  ASSERT_TRUE(format::write_model_inline(m, path).ok());
  base::ThreadPool pool(2);
  for (VerifyPolicy policy : {VerifyPolicy::kFull, VerifyPolicy::kMemo}) {
    struct Outcome {
      bool hit;
      std::string reason;
      int entry;
      uint64_t hashed;
    };
    std::vector<std::vector<Outcome>> runs;
    std::vector<uint64_t> totals;
    for (base::ThreadPool* p : {static_cast<base::ThreadPool*>(nullptr), &pool}) {
      auto model = format::Model::load(path).value();
      ResolverOptions opts;
      opts.verify = policy;
      opts.pool = p;
      opts.memo_dir = dir.file(p ? "memo-pool" : "memo-alone");
      opts.memo_granularity_ns = 0;
      Resolver r(*model, host(), opts);
      std::vector<Outcome> out;
      uint64_t sum = 0;
      for (const char* name : {"W1", "W2"}) {
        Resolution res = r.resolve(request(name));
        out.push_back({res.is_hit(), std::string(miss_reason_id(res.reason)),
                       res.is_hit() ? res.hit->entry : -1, res.bytes_hashed});
        sum += res.bytes_hashed;
        if (std::string(name) == "W2") {
          EXPECT_FALSE(res.is_hit());
          EXPECT_EQ(res.reason, MissReason::kCorruptPayload) << res.detail;
        }
      }
      EXPECT_EQ(r.totals().bytes_hashed, sum);
      runs.push_back(out);
      totals.push_back(sum);
    }
    ASSERT_EQ(runs[0].size(), runs[1].size());
    for (size_t i = 0; i < runs[0].size(); ++i) {
      EXPECT_EQ(runs[0][i].hit, runs[1][i].hit) << i;
      EXPECT_EQ(runs[0][i].reason, runs[1][i].reason) << i;
      EXPECT_EQ(runs[0][i].entry, runs[1][i].entry) << i;
      EXPECT_EQ(runs[0][i].hashed, runs[1][i].hashed) << i;
    }
    EXPECT_EQ(totals[0], totals[1]);
    EXPECT_GT(totals[0], 0u);
  }
}

}  // namespace
}  // namespace onnx_prepack::resolve
