#include "base/util/network_settings.hpp"

#include "base/util/ca_bundle.hpp"
#include "base/util/numbers.hpp"
#include "base/util/shown_url.hpp"
#include "base/util/strings.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

namespace ascend_setup {

namespace {

std::string lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

int default_port(const std::string& scheme) {
  if (scheme == "http") {
    return 80;
  }
  if (scheme == "https") {
    return 443;
  }
  return 0;
}

// A port from 0 to 65535, else -1.
int parse_port(const std::string& text) { return parse_integer(text, 0, 65535).value_or(-1); }

// An IPv4 or IPv6 literal as 16 bytes (IPv4: the first 4) and its family.
struct Address {
  int family = 0;
  std::array<unsigned char, 16> bytes{};
};

std::optional<Address> parse_address(const std::string& text) {
  Address address;
  if (::inet_pton(AF_INET, text.c_str(), address.bytes.data()) == 1) {
    address.family = AF_INET;
    return address;
  }
  if (::inet_pton(AF_INET6, text.c_str(), address.bytes.data()) == 1) {
    address.family = AF_INET6;
    return address;
  }
  return std::nullopt;
}

// The first `bits` bits of `a` and `b` are equal.
bool same_prefix(const Address& a, const Address& b, int bits) {
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const unsigned mask = bits >= 8 ? 0xFFu : (0xFFu << (8 - bits)) & 0xFFu;
    if ((a.bytes[static_cast<size_t>(i)] & mask) != (b.bytes[static_cast<size_t>(i)] & mask)) {
      return false;
    }
  }
  return true;
}

// One entry of a no_proxy list against an IP literal host.
bool address_entry_matches(const std::string& entry, const Address& host) {
  const size_t slash = entry.find('/');
  const auto address = parse_address(entry.substr(0, slash));
  if (!address || address->family != host.family) {
    return false;
  }
  const int width = host.family == AF_INET ? 32 : 128;
  int bits = width;
  if (slash != std::string::npos) {
    const auto prefix_bits = parse_integer(std::string_view(entry).substr(slash + 1), 0, width);
    if (!prefix_bits) {
      return false;
    }
    bits = *prefix_bits;
  }
  return same_prefix(*address, host, bits);
}

// One entry of a no_proxy list against a host name: itself or a subdomain.
bool name_entry_matches(std::string entry, const std::string& host) {
  if (!entry.empty() && entry.front() == '.') {
    entry.erase(0, 1);
  }
  while (!entry.empty() && entry.back() == '.') {
    entry.pop_back();
  }
  if (entry.empty() || entry.size() > host.size()) {
    return false;
  }
  if (entry.size() == host.size()) {
    return entry == host;
  }
  return host.compare(host.size() - entry.size(), entry.size(), entry) == 0 &&
         host[host.size() - entry.size() - 1] == '.';
}

// "[v6]:port", "host:port" or "v4:port" split; an IPv6 literal without
// brackets has no port.
void split_entry_port(std::string& entry, int& port) {
  port = 0;
  if (!entry.empty() && entry.front() == '[') {
    const size_t close = entry.find(']');
    if (close == std::string::npos) {
      return;
    }
    if (close + 1 < entry.size() && entry[close + 1] == ':') {
      port = parse_port(entry.substr(close + 2));
    }
    entry = entry.substr(1, close - 1);
    return;
  }
  const size_t colon = entry.find(':');
  if (colon != std::string::npos && entry.find(':', colon + 1) == std::string::npos) {
    port = parse_port(entry.substr(colon + 1));
    entry.erase(colon);
  }
}

const std::string* first_set(std::initializer_list<const std::optional<NetworkVariable>*> list,
                             std::string& name) {
  for (const auto* variable : list) {
    if (*variable && !(*variable)->value.empty()) {
      name = (*variable)->name;
      return &(*variable)->value;
    }
  }
  return nullptr;
}

}  // namespace

std::optional<UrlParts> url_parts(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos || scheme_end == 0) {
    return std::nullopt;
  }
  UrlParts parts;
  parts.scheme = lowered(url.substr(0, scheme_end));
  const size_t start = scheme_end + 3;
  const size_t end = std::min(url.find_first_of("/?#", start), url.size());
  std::string authority = url.substr(start, end - start);
  if (const size_t at = authority.rfind('@'); at != std::string::npos) {
    authority.erase(0, at + 1);
  }
  std::string port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) {
      return std::nullopt;
    }
    parts.host = authority.substr(1, close - 1);
    in6_addr literal{};
    if (::inet_pton(AF_INET6, parts.host.c_str(), &literal) != 1) {
      return std::nullopt;  // brackets hold an IPv6 literal only
    }
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        return std::nullopt;  // "[v6]x": nothing but a port may follow
      }
      port_text = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.rfind(':');
    parts.host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port_text = authority.substr(colon + 1);
    }
  }
  if (parts.host.find_first_of("[]") != std::string::npos ||
      ((authority.empty() || authority.front() != '[') &&
       parts.host.find(':') != std::string::npos)) {
    return std::nullopt;  // an IPv6 literal is bracketed, a name holds neither
  }
  parts.host = lowered(parts.host);
  while (!parts.host.empty() && parts.host.back() == '.') {
    parts.host.pop_back();  // "example.com." is example.com
  }
  if (parts.host.empty()) {
    return std::nullopt;
  }
  parts.port = port_text.empty() ? default_port(parts.scheme) : parse_port(port_text);
  if (parts.port < 0) {
    return std::nullopt;
  }
  return parts;
}

bool no_proxy_matches(const std::string& no_proxy, const std::string& host, int port) {
  const std::string name = lowered(host);
  const auto address = parse_address(name);
  size_t at = 0;
  while (at < no_proxy.size()) {
    const size_t end = std::min(no_proxy.find_first_of(", \t", at), no_proxy.size());
    std::string entry = lowered(no_proxy.substr(at, end - at));
    at = end + 1;
    if (entry.empty()) {
      continue;
    }
    if (entry == "*") {
      return true;
    }
    int entry_port = 0;
    split_entry_port(entry, entry_port);
    if (entry_port < 0 || (entry_port > 0 && entry_port != port)) {
      continue;
    }
    if (address ? address_entry_matches(entry, *address) : name_entry_matches(entry, name)) {
      return true;
    }
  }
  return false;
}

std::string ProxyChoice::shown() const { return shown_url(url); }

std::optional<ProxyChoice> NetworkSettings::proxy_for(const std::string& url) const {
  const auto parts = url_parts(url);
  if (!parts) {
    return std::nullopt;
  }
  // The scheme's own variable when set (even empty: no proxy), else all_proxy.
  const std::optional<NetworkVariable>* chosen = &all_proxy;
  if (parts->scheme == "https" && https_proxy) {
    chosen = &https_proxy;
  } else if (parts->scheme == "http" && http_proxy) {
    chosen = &http_proxy;
  }
  if (!*chosen || trim((*chosen)->value).empty()) {
    return std::nullopt;
  }
  if (no_proxy && no_proxy_matches(no_proxy->value, parts->host, parts->port)) {
    return std::nullopt;
  }
  ProxyChoice choice{trim((*chosen)->value), (*chosen)->name};
  if (choice.url.find("://") == std::string::npos) {
    choice.url = "http://" + choice.url;
  }
  return choice;
}

CaChoice NetworkSettings::download_ca() const {
  CaChoice choice;
  if (const std::string* file =
          first_set({&curl_ca_bundle, &ssl_cert_file, &requests_ca_bundle}, choice.named_by)) {
    choice.file = *file;
  } else if (auto bundle = system_ca_bundle()) {
    choice.file = bundle->string();
    choice.named_by = "the system's bundle";
  } else {
    choice.named_by = "the TLS library's default";
  }
  if (ssl_cert_dir && !ssl_cert_dir->value.empty()) {
    choice.directory = ssl_cert_dir->value;
  }
  return choice;
}

CaChoice NetworkSettings::git_ca(const std::string& config_file,
                                 const std::string& config_directory) const {
  CaChoice choice = download_ca();
  if (git_ssl_cainfo && !git_ssl_cainfo->value.empty()) {
    choice.file = git_ssl_cainfo->value;
    choice.named_by = git_ssl_cainfo->name;
  } else if (!config_file.empty()) {
    choice.file = config_file;
    choice.named_by = "git's http.sslCAInfo";
  }
  if (git_ssl_capath && !git_ssl_capath->value.empty()) {
    choice.directory = git_ssl_capath->value;
  } else if (!config_directory.empty()) {
    choice.directory = config_directory;
  }
  return choice;
}

std::string url_origin(const std::string& url) {
  const auto parts = url_parts(url);
  if (!parts) {
    return url;
  }
  const bool v6 = parts->host.find(':') != std::string::npos;
  std::string origin = parts->scheme + "://" + (v6 ? "[" + parts->host + "]" : parts->host);
  if (parts->port != default_port(parts->scheme)) {
    origin += ":" + std::to_string(parts->port);
  }
  return origin;
}

std::string untrusted_certificate_message(const std::string& url, const std::string& reason,
                                          const CaChoice& ca) {
  std::string checked = ca.file ? *ca.file : std::string("no bundle");
  if (ca.directory) {
    checked += " and " + *ca.directory;
  }
  return "the certificate of " + url_origin(url) + " is not trusted (" + reason +
         "; checked against " + checked + ", from " + ca.named_by +
         "): a private CA's bundle goes in CURL_CA_BUNDLE or SSL_CERT_FILE (for git: "
         "GIT_SSL_CAINFO)";
}

bool proxy_answer_is_transient(long status) {
  return status == 502 || status == 503 || status == 504;
}

std::string proxy_refusal_message(const ProxyChoice& proxy, const std::string& url, long status,
                                  const std::string& reason) {
  std::string answer = status > 0 ? "HTTP " + std::to_string(status) : std::string();
  if (!reason.empty()) {
    answer += (answer.empty() ? "" : ": ") + reason;
  }
  const std::string head = "the proxy " + proxy.shown() + " (from " + proxy.variable +
                           ") refused the way to " + url_origin(url) +
                           (answer.empty() ? "" : " (" + answer + ")") + ": ";
  const bool has_user = proxy.shown() != proxy.url;
  if (status == 407 || status == 401) {
    return head + (has_user ? "it does not accept the user and password in " + proxy.variable +
                                  ": correct them (percent-encoded, as http://user:password@"
                                  "host:port)"
                            : "it wants a user and password: give them in " + proxy.variable +
                                  " as http://user:password@host:port (percent-encoded)");
  }
  if (status == 403) {
    return head +
           "its rules do not let this host and port through: ask its administrators to allow "
           "it, or name the host in NO_PROXY if it is reachable without the proxy";
  }
  return head + "check " + proxy.variable + " and the proxy, or name the host in NO_PROXY if it " +
         "is reachable without the proxy";
}

}  // namespace ascend_setup
