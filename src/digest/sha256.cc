#include "digest/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace onnx_prepack::digest {
namespace {

// EVP fails only on allocation failure or a broken OpenSSL install: a bug-level condition.
void check(int ok, const char* what) {
  if (ok != 1) {
    std::fprintf(stderr, "onnx-prepack: OpenSSL %s failed for SHA-256\n", what);
    std::abort();
  }
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  check(ctx_ != nullptr, "EVP_MD_CTX_new");
  check(EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr), "EVP_DigestInit_ex");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(std::span<const uint8_t> data) {
  if (!data.empty()) check(EVP_DigestUpdate(ctx_, data.data(), data.size()), "EVP_DigestUpdate");
}

Digest Sha256::finalize() {
  Digest d{};
  unsigned int len = 0;
  check(EVP_DigestFinal_ex(ctx_, d.data(), &len), "EVP_DigestFinal_ex");
  check(len == d.size(), "digest length");
  return d;
}

}  // namespace onnx_prepack::digest
