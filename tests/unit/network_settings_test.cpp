// The proxy of a URL and the CA choice (base/util/network_settings.hpp):
// no_proxy matched as curl matches it, the lower case variable winning, the
// CA chains of the downloads and of git, the messages naming no password.
#include "base/util/network_settings.hpp"
#include "base/util/ca_bundle.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;

namespace {

NetworkSettings with_proxies(const std::string& no_proxy = "") {
  NetworkSettings settings;
  settings.https_proxy = NetworkVariable{"HTTPS_PROXY", "http://proxy.corp:3128"};
  settings.http_proxy = NetworkVariable{"http_proxy", "proxy.corp:8080"};
  settings.all_proxy = NetworkVariable{"ALL_PROXY", "socks5h://socks.corp:1080"};
  if (!no_proxy.empty()) {
    settings.no_proxy = NetworkVariable{"NO_PROXY", no_proxy};
  }
  return settings;
}

bool direct(const NetworkSettings& settings, const std::string& url) {
  return !settings.proxy_for(url).has_value();
}

TEST(NetworkSettingsTest, TheSchemeChoosesItsProxyElseAllProxy) {
  const NetworkSettings settings = with_proxies();
  const auto https = settings.proxy_for("https://example.com/x.tar.gz");
  ASSERT_TRUE(https);
  EXPECT_EQ(https->url, "http://proxy.corp:3128");
  EXPECT_EQ(https->variable, "HTTPS_PROXY");
  const auto http = settings.proxy_for("http://example.com/x");
  ASSERT_TRUE(http);
  EXPECT_EQ(http->url, "http://proxy.corp:8080");  // no scheme: http://
  EXPECT_EQ(http->variable, "http_proxy");
  const auto git = settings.proxy_for("git://example.com/repo");
  ASSERT_TRUE(git);
  EXPECT_EQ(git->variable, "ALL_PROXY");
  // A path, a local file: no host, no proxy.
  EXPECT_TRUE(direct(settings, "/srv/git/repo"));
}

TEST(NetworkSettingsTest, AnEmptySchemeProxyMeansDirectNotAllProxy) {
  NetworkSettings settings = with_proxies();
  settings.https_proxy->value = "";
  EXPECT_TRUE(direct(settings, "https://example.com/"));
  settings.https_proxy.reset();
  EXPECT_EQ(settings.proxy_for("https://example.com/")->variable, "ALL_PROXY");
}

TEST(NetworkSettingsTest, NoProxyMatchesAsCurlDoes) {
  // A name: itself and its subdomains at a dot, any case, a leading dot the same.
  EXPECT_TRUE(no_proxy_matches("example.com", "example.com", 443));
  EXPECT_TRUE(no_proxy_matches("example.com", "git.Example.COM", 443));
  EXPECT_TRUE(no_proxy_matches(".example.com", "example.com", 443));
  EXPECT_TRUE(no_proxy_matches(".example.com", "a.b.example.com", 443));
  EXPECT_FALSE(no_proxy_matches("example.com", "badexample.com", 443));
  EXPECT_FALSE(no_proxy_matches("git.example.com", "example.com", 443));
  EXPECT_TRUE(no_proxy_matches("example.com.", "example.com", 443));
  // Lists: commas and blanks.
  EXPECT_TRUE(no_proxy_matches("localhost, internal.corp ,example.com", "example.com", 80));
  EXPECT_TRUE(no_proxy_matches("a.org b.org", "b.org", 80));
  EXPECT_FALSE(no_proxy_matches("a.org,,b.org", "c.org", 80));
  // `*`: every host.
  EXPECT_TRUE(no_proxy_matches("*", "anything.at.all", 443));
  EXPECT_TRUE(no_proxy_matches("a.org,*", "127.0.0.1", 443));
  // IP literals and networks.
  EXPECT_TRUE(no_proxy_matches("127.0.0.1", "127.0.0.1", 8443));
  EXPECT_FALSE(no_proxy_matches("127.0.0.1", "127.0.0.2", 8443));
  EXPECT_TRUE(no_proxy_matches("10.0.0.0/8", "10.20.30.40", 443));
  EXPECT_FALSE(no_proxy_matches("10.0.0.0/8", "11.0.0.1", 443));
  EXPECT_TRUE(no_proxy_matches("192.168.1.0/23", "192.168.0.7", 443));
  EXPECT_FALSE(no_proxy_matches("192.168.1.0/24", "192.168.0.7", 443));
  EXPECT_TRUE(no_proxy_matches("::1", "::1", 443));
  EXPECT_TRUE(no_proxy_matches("fd00::/8", "fd12::1", 443));
  EXPECT_FALSE(no_proxy_matches("fd00::/8", "fe80::1", 443));
  // A name entry never matches an address, nor an address a name.
  EXPECT_FALSE(no_proxy_matches("0.0.1", "127.0.0.1", 443));
  EXPECT_FALSE(no_proxy_matches("127.0.0.1", "localhost", 443));
  // host:port matches that port only.
  EXPECT_TRUE(no_proxy_matches("example.com:8443", "example.com", 8443));
  EXPECT_FALSE(no_proxy_matches("example.com:8443", "example.com", 443));
  EXPECT_TRUE(no_proxy_matches("127.0.0.1:9000", "127.0.0.1", 9000));
  EXPECT_FALSE(no_proxy_matches("127.0.0.1:9000", "127.0.0.1", 9001));
  EXPECT_TRUE(no_proxy_matches("[::1]:9000", "::1", 9000));
  EXPECT_FALSE(no_proxy_matches("[::1]:9000", "::1", 9001));
  EXPECT_FALSE(no_proxy_matches("", "example.com", 443));
}

TEST(NetworkSettingsTest, NoProxyUsesTheUrlsHostAndPort) {
  const NetworkSettings settings = with_proxies("example.com,127.0.0.1:8443");
  EXPECT_TRUE(direct(settings, "https://user:pw@git.example.com:444/repo.git"));
  EXPECT_TRUE(direct(settings, "https://127.0.0.1:8443/x"));
  EXPECT_FALSE(direct(settings, "https://127.0.0.1:9443/x"));
  EXPECT_FALSE(direct(settings, "https://example.org/x"));
  EXPECT_TRUE(direct(with_proxies("[::1]"), "https://[::1]:8443/x"));
}

TEST(NetworkSettingsTest, UrlParts) {
  const auto parts = url_parts("HTTPS://User:p%40ss@Git.Example.com./a/b?c#d");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->scheme, "https");
  EXPECT_EQ(parts->host, "git.example.com");
  EXPECT_EQ(parts->port, 443);
  EXPECT_EQ(url_parts("http://[::1]:8080/")->host, "::1");
  EXPECT_EQ(url_parts("http://[::1]:8080/")->port, 8080);
  EXPECT_FALSE(url_parts("http://host:99999/"));
  EXPECT_FALSE(url_parts("no-scheme/path"));
  EXPECT_EQ(url_origin("https://u:p@h.org:443/x/y"), "https://h.org");
  EXPECT_EQ(url_origin("https://127.0.0.1:8443/x"), "https://127.0.0.1:8443");
}

TEST(NetworkSettingsTest, ShownProxyHasNoPassword) {
  EXPECT_EQ((ProxyChoice{"http://user:s%40cret@proxy:3128", "HTTPS_PROXY"}.shown()),
            "http://user:****@proxy:3128");
  EXPECT_EQ((ProxyChoice{"http://token@proxy:3128", "HTTPS_PROXY"}.shown()),
            "http://****@proxy:3128");
  EXPECT_EQ((ProxyChoice{"http://proxy:3128", "HTTPS_PROXY"}.shown()), "http://proxy:3128");
  const std::string refusal = proxy_refusal_message(
      {"http://user:s3cret@proxy:3128", "https_proxy"}, "https://h.org/x", 407, "denied");
  EXPECT_EQ(refusal.find("s3cret"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("the proxy http://user:****@proxy:3128 (from https_proxy)"),
            std::string::npos)
      << refusal;
  EXPECT_NE(refusal.find("does not accept the user and password"), std::string::npos) << refusal;
  const std::string anonymous =
      proxy_refusal_message({"http://proxy:3128", "HTTPS_PROXY"}, "https://h.org/x", 407, "");
  EXPECT_NE(anonymous.find("it wants a user and password: give them in HTTPS_PROXY"),
            std::string::npos)
      << anonymous;
  const std::string forbidden =
      proxy_refusal_message({"http://proxy:3128", "HTTPS_PROXY"}, "https://h.org/x", 403, "");
  EXPECT_NE(forbidden.find("NO_PROXY"), std::string::npos) << forbidden;
}

TEST(NetworkSettingsTest, DownloadCaChain) {
  NetworkSettings settings;
  settings.requests_ca_bundle = NetworkVariable{"REQUESTS_CA_BUNDLE", "/r.pem"};
  EXPECT_EQ(settings.download_ca().file, "/r.pem");
  EXPECT_EQ(settings.download_ca().named_by, "REQUESTS_CA_BUNDLE");
  settings.ssl_cert_file = NetworkVariable{"SSL_CERT_FILE", "/s.pem"};
  EXPECT_EQ(settings.download_ca().file, "/s.pem");
  settings.curl_ca_bundle = NetworkVariable{"CURL_CA_BUNDLE", "/c.pem"};
  EXPECT_EQ(settings.download_ca().file, "/c.pem");
  EXPECT_EQ(settings.download_ca().named_by, "CURL_CA_BUNDLE");
  settings.curl_ca_bundle->value = "";  // empty: as unset
  EXPECT_EQ(settings.download_ca().file, "/s.pem");
  EXPECT_FALSE(settings.download_ca().directory);
  settings.ssl_cert_dir = NetworkVariable{"SSL_CERT_DIR", "/certs"};
  EXPECT_EQ(settings.download_ca().directory, "/certs");
  // Nothing set: the system's bundle.
  const CaChoice system = NetworkSettings{}.download_ca();
  if (const auto bundle = system_ca_bundle()) {
    EXPECT_EQ(system.file, bundle->string());
    EXPECT_EQ(system.named_by, "the system's bundle");
  }
}

TEST(NetworkSettingsTest, GitCaChain) {
  NetworkSettings settings;
  settings.ssl_cert_file = NetworkVariable{"SSL_CERT_FILE", "/s.pem"};
  settings.ssl_cert_dir = NetworkVariable{"SSL_CERT_DIR", "/certs"};
  EXPECT_EQ(settings.git_ca("", "").file, "/s.pem");  // the downloads' choice
  EXPECT_EQ(settings.git_ca("", "").directory, "/certs");
  EXPECT_EQ(settings.git_ca("/config.pem", "/config-certs").file, "/config.pem");
  EXPECT_EQ(settings.git_ca("/config.pem", "").named_by, "git's http.sslCAInfo");
  EXPECT_EQ(settings.git_ca("/config.pem", "/config-certs").directory, "/config-certs");
  settings.git_ssl_cainfo = NetworkVariable{"GIT_SSL_CAINFO", "/g.pem"};
  settings.git_ssl_capath = NetworkVariable{"GIT_SSL_CAPATH", "/g-certs"};
  EXPECT_EQ(settings.git_ca("/config.pem", "/config-certs").file, "/g.pem");
  EXPECT_EQ(settings.git_ca("/config.pem", "").named_by, "GIT_SSL_CAINFO");
  EXPECT_EQ(settings.git_ca("", "/config-certs").directory, "/g-certs");
}

TEST(NetworkSettingsTest, UntrustedCertificateNamesTheHostAndTheVariables) {
  CaChoice ca;
  ca.file = "/etc/ssl/certs/ca-certificates.crt";
  ca.named_by = "the system's bundle";
  const std::string message = untrusted_certificate_message(
      "https://127.0.0.1:8443/llvm.tar.gz", "unable to get local issuer certificate", ca);
  EXPECT_EQ(message,
            "the certificate of https://127.0.0.1:8443 is not trusted (unable to get local "
            "issuer certificate; checked against /etc/ssl/certs/ca-certificates.crt, from the "
            "system's bundle): a private CA's bundle goes in CURL_CA_BUNDLE or SSL_CERT_FILE "
            "(for git: GIT_SSL_CAINFO)");
}

}  // namespace
