// SHA-256 (OpenSSL, which uses the CPU's SHA instructions where there are
// some), raw or as lowercase hex: the LLVM patch hash, the patch engine's
// record of what it applied, the wheel writer's digests.
#pragma once

#include <memory>
#include <optional>
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

// Bytes as lowercase hex, and back (nullopt for an odd length or a character
// that is not a hex digit).
std::string to_hex(std::string_view bytes);
std::optional<std::string> from_hex(std::string_view text);

// True for a SHA-256 as lowercase hex: 64 digits 0-9a-f.
bool is_sha256_hex(std::string_view text);

}  // namespace ascend_setup
