#include "base/util/ca_bundle.hpp"

#include <unistd.h>

namespace ascend_setup {

std::optional<std::filesystem::path> system_ca_bundle() {
  for (const char* file :
       {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/ca-bundle.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
        "/etc/ssl/cert.pem"}) {
    if (::access(file, R_OK) == 0) {
      return std::filesystem::path(file);
    }
  }
  return std::nullopt;
}

}  // namespace ascend_setup
