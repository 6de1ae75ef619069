#include "base/util/digest.hpp"

#include <openssl/evp.h>

namespace ascend_setup {

Sha256::Sha256() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
  EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr);
}

Sha256& Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(context_.get(), bytes.data(), bytes.size());
  return *this;
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_.get(), digest, &length);
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    text += digits[digest[i] >> 4];
    text += digits[digest[i] & 0xf];
  }
  return text;
}

std::string sha256_hex(std::string_view bytes) { return Sha256().update(bytes).hex(); }

}  // namespace ascend_setup
