// ResolvedWeights::prepare_conv: Conv filters through the resolver like GEMM
// B operands (prepared_weights.cc): a hit uses the mapped payload in place, a
// miss packs now into the format of the host kernel's rows (and writes it back
// to a writable cache store). Every decision is recorded.
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "pack/conv_filter_format.h"
#include "runtime/prepared_weights.h"

namespace onnx_prepack::runtime {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The floats at the start of a pack (mapped or owned).
class PackedConvFilter final : public PreparedConvFilter {
 public:
  PackedConvFilter(const float* data, size_t mr, std::shared_ptr<const void> keep)
      : data_(data), mr_(mr), keep_(std::move(keep)) {}
  const float* data() const override { return data_; }
  size_t mr() const override { return mr_; }

 private:
  const float* data_;
  size_t mr_;
  std::shared_ptr<const void> keep_;
};

}  // namespace

Result<std::shared_ptr<const PreparedConvFilter>> ResolvedWeights::prepare_conv(
    const std::string& source, const Tensor& w, const kernels::ConvGeometry& g, size_t mr,
    const std::string& consumer, bool transposed) {
  auto key = std::make_tuple(source, g.group, transposed);
  if (auto it = conv_cache_.find(key); it != conv_cache_.end()) {
    if (it->second->mr() == mr) return it->second;
    return std::shared_ptr<const PreparedConvFilter>();  // another kernel: packed by the caller
  }
  std::span<const uint8_t> bytes(static_cast<const uint8_t*>(w.data), w.nbytes());
  OP_ASSIGN_OR_RETURN(pack::ConvFilterSource src,
                      pack::conv_filter_source(bytes, w.dtype, w.shape, g.group, transposed));
  const pack::ConvFilterFormat* native =
      pack::conv_filter_format_for_rows(w.shape, g.group, mr, level_, transposed);
  if (native == nullptr) return std::shared_ptr<const PreparedConvFilter>();
  resolve::PackRequest request;
  request.source_name = source;
  // Only the format of the kernel this host runs for the node: a hit in
  // another block height would need another microkernel.
  for (auto& a : pack::conv_filter_acceptable_formats(w.shape, g.group, level_, transposed)) {
    if (a.name == native->name) request.formats.push_back(std::move(a));
  }

  WeightDecision d;
  d.name = source;
  d.consumer = consumer;
  std::shared_ptr<const PreparedConvFilter> prepared;
  resolve::Resolution res = resolve_recorded(request, d);
  const uint64_t size = pack::conv_filter_payload_bytes(*native, src);
  if (res.is_hit() && res.hit->payload.size() == size) {
    const auto& hit = *res.hit;
    std::shared_ptr<const void> keep = hit.keep_alive;
    const uint8_t* data = hit.payload.data();
    if (reinterpret_cast<uintptr_t>(data) % 64 != 0) {
      // An inline payload inside the parsed message may be misaligned: copy it.
      void* mem = std::aligned_alloc(64, std::max<size_t>(64, (size + 63) / 64 * 64));
      if (mem == nullptr)
        return resource_exhausted("weight '" + source + "': cannot copy the pack");
      std::memcpy(mem, data, size);
      keep = std::shared_ptr<void>(mem, std::free);
      data = static_cast<const uint8_t*>(mem);
    }
    d.decision = "hit";
    d.format = std::string(native->name);
    d.detail = hit.entry >= 0 ? "compiled_tensors[" + std::to_string(hit.entry) + "]"
                              : "cache " + hit.cache_path;
    d.bytes_mapped = hit.payload.size();
    prepared = std::make_shared<PackedConvFilter>(reinterpret_cast<const float*>(data), mr, keep);
    if (hit.payload_external) hit_payloads_.push_back(hit.payload);
  } else {
    d.decision = "miss";
    d.reason = std::string(
        resolve::miss_reason_id(res.is_hit() ? resolve::MissReason::kFormatMismatch : res.reason));
    d.detail = res.detail;
    auto t1 = std::chrono::steady_clock::now();
    void* mem = std::aligned_alloc(64, std::max<uint64_t>(64, (size + 63) / 64 * 64));
    if (mem == nullptr)
      return resource_exhausted("weight '" + source + "': cannot allocate the pack");
    std::shared_ptr<void> owner(mem, std::free);
    std::span<uint8_t> out(static_cast<uint8_t*>(mem), size);
    OP_RETURN_IF_ERROR(pack::conv_filter_pack(*native, src, out));
    d.pack_ms = ms_since(t1);
    d.bytes_packed = w.nbytes();
    d.format = std::string(native->name);
    if (resolver_ != nullptr && resolver_->options().cache != nullptr &&
        resolver_->options().cache->mode() == resolve::CacheMode::kReadWrite &&
        res.reason != resolve::MissReason::kOverriddenByInput && !request.formats.empty()) {
      auto t2 = std::chrono::steady_clock::now();
      Status s =
          resolver_->store(request, request.formats.front(), pack::conv_filter_struct_type(*native),
                           pack::conv_filter_dims(*native, src), out);
      d.stored = s.ok();
      if (!s.ok()) d.store_error = s.message();  // a failed write-back never fails the run
      d.store_ms = ms_since(t2);
    }
    prepared = std::make_shared<PackedConvFilter>(static_cast<const float*>(mem), mr, owner);
  }
  decisions_.push_back(std::move(d));
  conv_cache_[key] = prepared;
  return prepared;
}

}  // namespace onnx_prepack::runtime
