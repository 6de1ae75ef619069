// A URL as shown: the one place secrets are masked in what ascend-setup shows
// or writes for people to read (its log lines and errors, --list-env,
// --doctor, the build report, trace and step summary, GitHub's workflow
// commands), the way pip shows a URL:
//   - the userinfo's password: `http://user:****@host`; a userinfo without
//     ':' is a token: `http://****@host`;
//   - the value of an attribute or query parameter whose name says it is a
//     secret (names_a_secret()): ccache's `redis://host|bearer-token=****`,
//     `https://host/p?token=****`.
// Nothing else changes: the scheme, the user, the host, the path, a plain
// path, `git@host:path` and an e-mail address stay as they are. Masking is
// idempotent. What a tool is given (its environment, its arguments) keeps
// the real value: only what is shown is masked.
#pragma once

#include <string>
#include <string_view>

namespace ascend_setup {

// What a masked secret shows.
inline constexpr std::string_view kMasked = "****";

// `url` as shown. A value known to be a URL: without "scheme://" it starts
// with its authority, as curl reads a proxy (`user:password@host:port`).
std::string shown_url(std::string_view url);

// `text` with every URL in it (each `scheme://...` up to a blank, a quote or
// `<>`) as shown_url() shows it, and every `|NAME=VALUE` attribute whose
// name says it is a secret masked: for free text that may embed URLs (an
// error of libcurl or libgit2, a log line, a report).
std::string shown_text(std::string_view text);

// True when an attribute, parameter or variable named `name` holds a secret:
// its name contains, in any case, password, passwd, token, secret, key or
// credential.
bool names_a_secret(std::string_view name);

}  // namespace ascend_setup
