// The system's bundle of trusted CA certificates, found where the
// distributions keep it: a portable build of libcurl or libgit2 has none
// built in (and Debian's built-in path is wrong on AlmaLinux, the manylinux
// image), so both are given this file unless the user names one.
#pragma once

#include <filesystem>
#include <optional>

namespace ascend_setup {

// The first readable file of: /etc/ssl/certs/ca-certificates.crt (Debian,
// Ubuntu), /etc/pki/tls/certs/ca-bundle.crt (RHEL, AlmaLinux),
// /etc/ssl/ca-bundle.pem (SUSE), /etc/pki/ca-trust/extracted/pem/
// tls-ca-bundle.pem, /etc/ssl/cert.pem; nullopt when none is.
std::optional<std::filesystem::path> system_ca_bundle();

}  // namespace ascend_setup
