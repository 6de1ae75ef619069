#include "base/util/shown_url.hpp"

#include <algorithm>
#include <cctype>

namespace ascend_setup {

namespace {

constexpr std::string_view kSecretWords[] = {"password", "passwd", "token",
                                             "secret",   "key",    "credential"};

bool is_blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Where a URL inside text ends.
bool ends_url(char c) {
  return is_blank(c) || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>';
}

// Where a URL's authority ends. Not at '?' or '#': a password that holds one
// unencoded is masked whole.
bool ends_authority(char c) { return ends_url(c) || c == '/' || c == '|'; }

bool is_scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}

// True when `url` opens with "scheme://".
bool has_scheme(std::string_view url) {
  const size_t mark = url.find("://");
  return mark != std::string_view::npos && mark > 0 &&
         std::isalpha(static_cast<unsigned char>(url[0])) != 0 &&
         std::all_of(url.begin(), url.begin() + static_cast<std::ptrdiff_t>(mark), is_scheme_char);
}

// `url` with the userinfo of the authority starting at `authority` masked.
std::string masked_userinfo(std::string_view url, size_t authority) {
  size_t end = authority;
  while (end < url.size() && !ends_authority(url[end])) {
    ++end;
  }
  const size_t at = url.substr(authority, end - authority).rfind('@');
  if (at == std::string_view::npos) {
    return std::string(url);
  }
  const std::string_view userinfo = url.substr(authority, at);
  const size_t colon = userinfo.find(':');
  std::string shown(url.substr(0, authority));
  if (colon != std::string_view::npos) {
    shown += userinfo.substr(0, colon + 1);
  }
  shown += kMasked;
  shown += url.substr(authority + at);
  return shown;
}

// `text` with the value of each secret `NAME=VALUE` masked: after `|`
// (ccache's attributes, up to the next `|`) anywhere, and after `?`, `&` or
// `;` (query parameters, up to the next `&`, `;`, `#` or `|`) when `in_url`.
std::string masked_parameters(std::string_view text, bool in_url) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const char opener = text[i];
    out += opener;
    ++i;
    const bool attribute = opener == '|';
    if (!attribute && !(in_url && (opener == '?' || opener == '&' || opener == ';'))) {
      continue;
    }
    size_t name_end = i;
    while (name_end < text.size() && is_name_char(text[name_end])) {
      ++name_end;
    }
    if (name_end == i || name_end == text.size() || text[name_end] != '=' ||
        !names_a_secret(text.substr(i, name_end - i))) {
      continue;
    }
    const std::string_view stops = attribute ? "|" : "&;#|";
    size_t value_end = name_end + 1;
    while (value_end < text.size() && !ends_url(text[value_end]) &&
           stops.find(text[value_end]) == std::string_view::npos) {
      ++value_end;
    }
    out += text.substr(i, name_end + 1 - i);
    if (value_end > name_end + 1) {
      out += kMasked;
    }
    i = value_end;
  }
  return out;
}

// One URL (no blank in it) whose authority starts at `authority`, as shown.
std::string masked_url(std::string_view url, size_t authority) {
  return masked_parameters(masked_userinfo(url, authority), true);
}

}  // namespace

bool names_a_secret(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::any_of(std::begin(kSecretWords), std::end(kSecretWords),
                     [&](std::string_view word) { return lower.find(word) != std::string::npos; });
}

std::string shown_url(std::string_view url) {
  if (has_scheme(url)) {
    return shown_text(url);
  }
  // As curl reads a proxy without a scheme: the authority first.
  const size_t end = std::find_if(url.begin(), url.end(), is_blank) - url.begin();
  return shown_text(masked_url(url.substr(0, end), 0) + std::string(url.substr(end)));
}

std::string shown_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t done = 0;
  for (size_t mark = text.find("://"); mark != std::string_view::npos;
       mark = text.find("://", done)) {
    size_t start = mark;
    while (start > done && is_scheme_char(text[start - 1])) {
      --start;
    }
    size_t end = mark + 3;
    while (end < text.size() && !ends_url(text[end])) {
      ++end;
    }
    out += masked_parameters(text.substr(done, start - done), false);
    out += masked_url(text.substr(start, end - start), mark + 3 - start);
    done = end;
  }
  out += masked_parameters(text.substr(done), false);
  return out;
}

}  // namespace ascend_setup
