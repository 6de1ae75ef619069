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

std::string Sha256::digest() {
  unsigned char bytes[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context_.get(), bytes, &length);
  return std::string(reinterpret_cast<const char*>(bytes), length);
}

std::string Sha256::hex() {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  for (const char c : digest()) {
    const auto byte = static_cast<unsigned char>(c);
    text += digits[byte >> 4];
    text += digits[byte & 0xf];
  }
  return text;
}

std::string sha256_hex(std::string_view bytes) { return Sha256().update(bytes).hex(); }

}  // namespace ascend_setup
