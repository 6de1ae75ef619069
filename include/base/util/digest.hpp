// SHA-256 (OpenSSL), as lowercase hex: the LLVM patch hash and the patch
// engine's record of what it applied.
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace ascend_setup {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view bytes);
  std::string hex();     // finishes the digest; call once
  std::string digest();  // finishes the digest, as its 32 raw bytes; call once

 private:
  std::unique_ptr<evp_md_ctx_st, void (*)(evp_md_ctx_st*)> context_;
};

std::string sha256_hex(std::string_view bytes);

}  // namespace ascend_setup
