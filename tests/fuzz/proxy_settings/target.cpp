// The network settings read from the environment: a URL's parts (the
// download URL, a proxy URL) and NO_PROXY's entries (host suffixes, `*`,
// IPv4 and IPv6 literals and CIDR ranges, host:port). The input is NO_PROXY,
// \x1f, the URL. Invariants: no exception at all; a URL that parses has a
// lower-case scheme and host and a port of 0 to 65535, and its origin parses
// to the same parts; a host always matches a NO_PROXY that names it exactly
// or is `*`, and never an empty NO_PROXY.
#include "base/util/network_settings.hpp"
#include "fuzz_support.hpp"

#include <cctype>

using namespace ascend_setup;

namespace {

bool lower(const std::string& text) {
  for (const char c : text) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::fields(fuzz::as_text(data, size), '\x1f', 2);
  const std::string& no_proxy = parts[0];
  const std::string& url = parts[1];
  std::optional<UrlParts> found;
  FUZZ_CHECK(fuzz::accepts([&] { found = url_parts(url); }), "url_parts threw");
  if (!found) {
    return 0;
  }
  FUZZ_CHECK(lower(found->scheme) && lower(found->host), url);
  FUZZ_CHECK(found->port >= 0 && found->port <= 65535, url);
  std::string origin;
  FUZZ_CHECK(fuzz::accepts([&] { origin = url_origin(url); }), "url_origin threw");
  const auto again = url_parts(origin);
  FUZZ_CHECK(again && again->scheme == found->scheme && again->host == found->host &&
                 again->port == found->port,
             "the origin " + origin + " of " + url + " has other parts");
  bool matches = false;
  FUZZ_CHECK(fuzz::accepts([&] { matches = no_proxy_matches(no_proxy, found->host, found->port); }),
             "no_proxy_matches threw");
  (void)matches;
  if (!found->host.empty() && found->host.find_first_of(", \t") == std::string::npos) {
    FUZZ_CHECK(no_proxy_matches(found->host, found->host, found->port),
               "NO_PROXY=" + found->host + " does not match its own host");
    FUZZ_CHECK(no_proxy_matches("*", found->host, found->port), "NO_PROXY=* does not match");
  }
  FUZZ_CHECK(!no_proxy_matches("", found->host, found->port), "an empty NO_PROXY matches");
  return 0;
}
