// SHA-256 through OpenSSL's EVP interface, streamed over any number of updates.
#pragma once

#include <cstdint>
#include <span>

#include "digest/digest.h"

struct evp_md_ctx_st;

namespace onnx_prepack::digest {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::span<const uint8_t> data);
  Digest finalize();  // once

 private:
  evp_md_ctx_st* ctx_;
};

}  // namespace onnx_prepack::digest
