// A URL as shown: pip's shapes for the userinfo, secret attributes and query
// parameters masked, URLs found inside free text, and nothing else touched.
#include "base/util/shown_url.hpp"

#include <gtest/gtest.h>

using namespace ascend_setup;

TEST(ShownUrl, UserinfoAsPipShowsIt) {
  EXPECT_EQ(shown_url("https://alice:s3cret@proxy.corp:3128"),
            "https://alice:****@proxy.corp:3128");
  EXPECT_EQ(shown_url("https://alice:s%40cret@proxy.corp:3128/"),
            "https://alice:****@proxy.corp:3128/");
  // Without ':' the userinfo is a token.
  EXPECT_EQ(shown_url("https://ghp_token@github.com/org/repo.git"),
            "https://****@github.com/org/repo.git");
  // Redis's password without a user.
  EXPECT_EQ(shown_url("redis://:hunter2@cache.ci:6379/3"), "redis://:****@cache.ci:6379/3");
  EXPECT_EQ(shown_url("http://u:p@[::1]:8080/ccache"), "http://u:****@[::1]:8080/ccache");
  EXPECT_EQ(shown_url("http://user:@host/"), "http://user:****@host/");
  // An unencoded '@', '?' or '#' in the password: masked whole.
  EXPECT_EQ(shown_url("http://bob:p@ss?w#rd@mirror.ci/m"), "http://bob:****@mirror.ci/m");
  // Nothing to mask.
  EXPECT_EQ(shown_url("https://mirror.ci/llvm/x.tar.gz"), "https://mirror.ci/llvm/x.tar.gz");
  EXPECT_EQ(shown_url("https://mirror.ci/pkg@1.0/x.tar.gz"), "https://mirror.ci/pkg@1.0/x.tar.gz");
  EXPECT_EQ(shown_url(""), "");
}

TEST(ShownUrl, WithoutSchemeTheValueStartsWithItsAuthorityAsCurlReadsAProxy) {
  EXPECT_EQ(shown_url("alice:s3cret@proxy.corp:3128"), "alice:****@proxy.corp:3128");
  EXPECT_EQ(shown_url("proxy.corp:3128"), "proxy.corp:3128");
}

TEST(ShownUrl, SecretAttributesAndParametersAreMasked) {
  EXPECT_EQ(shown_url("http://cache.ci/c|bearer-token=abc123|layout=subdirs|read-only=true"),
            "http://cache.ci/c|bearer-token=****|layout=subdirs|read-only=true");
  EXPECT_EQ(shown_url("redis://:pw@cache.ci|bearer-token=abc&def|keep-alive=true"),
            "redis://:****@cache.ci|bearer-token=****|keep-alive=true");
  EXPECT_EQ(shown_url("https://m.ci/p?x=1&access_token=abc&Api-Key=k#top"),
            "https://m.ci/p?x=1&access_token=****&Api-Key=****#top");
  EXPECT_EQ(shown_url("https://m.ci/p?password=a;secret=b"),
            "https://m.ci/p?password=****;secret=****");
  // A bad value of ASCEND_SETUP_COMPILE_CACHE, shown in its error.
  EXPECT_EQ(shown_url("cache.ci|bearer-token=abc"), "cache.ci|bearer-token=****");
  // Empty values and names that say nothing secret stay.
  EXPECT_EQ(shown_url("http://h/|bearer-token=|layout=flat"),
            "http://h/|bearer-token=|layout=flat");
  EXPECT_TRUE(names_a_secret("bearer-token"));
  EXPECT_TRUE(names_a_secret("GITHUB_TOKEN"));
  EXPECT_TRUE(names_a_secret("PassWord"));
  EXPECT_FALSE(names_a_secret("keep-alive"));
  EXPECT_FALSE(names_a_secret("connect-timeout"));
}

TEST(ShownText, EveryUrlInsideTextIsShownAsAUrl) {
  EXPECT_EQ(shown_text("the proxy http://alice:pw1@p:3128 (from https_proxy) refused "
                       "https://bob:pw2@h.org/x; see `redis://:pw3@c|bearer-token=t` and "
                       "<http://tok@d/>, \"ftp://e:pw4@f\""),
            "the proxy http://alice:****@p:3128 (from https_proxy) refused "
            "https://bob:****@h.org/x; see `redis://:****@c|bearer-token=****` and "
            "<http://****@d/>, \"ftp://e:****@f\"");
  // libcurl's and libgit2's ways of embedding one.
  EXPECT_EQ(shown_text("Failed to connect to proxy (http://u:pw@127.0.0.1:9)"),
            "Failed to connect to proxy (http://u:****@127.0.0.1:9)");
  EXPECT_EQ(shown_text("a|token=abc b"), "a|token=**** b");
  EXPECT_EQ(shown_text("line one\nhttp://u:pw@h\nline three"),
            "line one\nhttp://u:****@h\nline three");
}

TEST(ShownText, NothingElseIsMasked) {
  for (const char* text :
       {"git@github.com:triton-lang/triton.git", "ssh git@host:path/repo", "alice@example.com",
        "/home/alice:x/a@b/c", "./build/lib.linux@x", "memcpy@GLIBC_2.14", "x ? token=abc & y",
        "name=token", "foo.cpp:12:5: error: expected ';'", "https://h/p?x=1&y=2", "://", "a :// b",
        "http://", "ascend-setup: info: compiled 8 objects"}) {
    EXPECT_EQ(shown_text(text), text);
  }
  EXPECT_EQ(shown_text("http://@h"), "http://****@h");  // an empty token is masked, as pip does
}

TEST(ShownText, MaskingTwiceChangesNothing) {
  for (const char* text : {"http://a:b@h|bearer-token=t http://t@h2/?token=x&y=1", "redis://:p@h",
                           "a|password=x", "https://h/"}) {
    const std::string once = shown_text(text);
    EXPECT_EQ(shown_text(once), once);
    EXPECT_EQ(shown_url(once), once);
  }
}
