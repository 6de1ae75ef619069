// The way to the network as curl, pip and git take it from the environment,
// in one place for the package downloads (libcurl) and the git fetches
// (libgit2): the proxy of a URL and the CA certificates a TLS peer is checked
// against. Pure: the caller gives the values (base/layer's
// network_settings_from_environment() reads them through the registry; git's
// own configuration is read by base/git), nothing here reads the environment.
//
// Proxies: https_proxy for https://, http_proxy for http://, else all_proxy;
// each in either case, the lower case winning when both are set (as curl);
// a proxy URL without a scheme is http://; credentials in it (user:password@,
// percent-encoded) are the proxy's. no_proxy (either case) lists hosts reached
// directly, as curl matches them: `*` for every host; a name matches itself
// and its subdomains (a leading dot changes nothing); an IP literal matches
// that address, with /bits a network; host:port matches that port only.
//
// CA: for downloads CURL_CA_BUNDLE, else SSL_CERT_FILE, else
// REQUESTS_CA_BUNDLE, else the system's bundle (ca_bundle.hpp); SSL_CERT_DIR
// a directory. For git GIT_SSL_CAINFO, else git's http.sslCAInfo, else the
// downloads' choice; GIT_SSL_CAPATH, else http.sslCAPath, else SSL_CERT_DIR.
#pragma once

#include <optional>
#include <string>

namespace ascend_setup {

// A variable that is set: its name (the case it was found in) and value.
struct NetworkVariable {
  std::string name;
  std::string value;
};

// The proxy chosen for a URL.
struct ProxyChoice {
  std::string url;       // as given (credentials included), with http:// when it had no scheme
  std::string variable;  // where it came from (e.g. HTTPS_PROXY)
  // The URL as shown (shown_url.hpp: its password masked), for messages.
  std::string shown() const;
};

// The CA certificates to check a TLS peer against.
struct CaChoice {
  std::optional<std::string> file;       // a PEM bundle
  std::optional<std::string> directory;  // a hashed directory
  std::string named_by;                  // "CURL_CA_BUNDLE", ..., "the system's bundle"
};

struct NetworkSettings {
  std::optional<NetworkVariable> http_proxy;
  std::optional<NetworkVariable> https_proxy;
  std::optional<NetworkVariable> all_proxy;
  std::optional<NetworkVariable> no_proxy;
  std::optional<NetworkVariable> curl_ca_bundle;
  std::optional<NetworkVariable> ssl_cert_file;
  std::optional<NetworkVariable> requests_ca_bundle;
  std::optional<NetworkVariable> ssl_cert_dir;
  std::optional<NetworkVariable> git_ssl_cainfo;
  std::optional<NetworkVariable> git_ssl_capath;

  // The proxy for `url`, nullopt when it is reached directly (no proxy set
  // for its scheme, an empty one, or no_proxy names its host).
  std::optional<ProxyChoice> proxy_for(const std::string& url) const;

  // The CA of the downloads.
  CaChoice download_ca() const;

  // The CA of git; `config_file` and `config_directory`: git's http.sslCAInfo
  // and http.sslCAPath (empty when unset).
  CaChoice git_ca(const std::string& config_file, const std::string& config_directory) const;
};

// The parts of a URL a proxy decision needs; nullopt when `url` has no
// "scheme://host".
struct UrlParts {
  std::string scheme;  // lower case
  std::string host;    // lower case, an IPv6 literal without its brackets
  int port = 0;        // the given one, else the scheme's (80, 443; 0 when unknown)
};
std::optional<UrlParts> url_parts(const std::string& url);

// True when the no_proxy list `no_proxy` names `host` (at `port`); see the top.
bool no_proxy_matches(const std::string& no_proxy, const std::string& host, int port);

// "scheme://host[:port]" of `url`, for messages (no path, no credentials).
std::string url_origin(const std::string& url);

// The one line of a TLS peer whose certificate is not trusted: the host, the
// library's reason, the CA used and where a private CA's bundle goes.
std::string untrusted_certificate_message(const std::string& url, const std::string& reason,
                                          const CaChoice& ca);

// A proxy's answer to CONNECT that says "not now" rather than "no": 502, 503
// or 504 (its way onward failed, or it is overloaded, as corporate proxies
// are under load). Worth another try; any other answer is final.
bool proxy_answer_is_transient(long status);

// The one line of a proxy that refused a request (`status`: its HTTP answer,
// 407 or 401 (tinyproxy answers a CONNECT with bad credentials so), 403, or
// another; 0 when unknown): the proxy without its password and
// what to fix.
std::string proxy_refusal_message(const ProxyChoice& proxy, const std::string& url, long status,
                                  const std::string& reason);

}  // namespace ascend_setup
