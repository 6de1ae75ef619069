// A URL as shown (util/shown_url.hpp) over any text: a log line, an error of
// libcurl or libgit2, a report. Invariants: no exception at all; masking
// twice changes nothing; text without "://" or '|' is never changed; a
// password or a bearer token planted after the text (after a blank) never
// shows, and masking never makes a secret appear that the text did not hold.
#include "base/util/shown_url.hpp"
#include "fuzz_support.hpp"

using namespace ascend_setup;

namespace {

constexpr std::string_view kSecret = "CANARY-7f3a";

size_t count(const std::string& text, std::string_view part) {
  size_t found = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++found;
  }
  return found;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fuzz::as_text(data, size));
  std::string once;
  std::string url;
  FUZZ_CHECK(fuzz::accepts([&] { once = shown_text(text); }), "shown_text threw");
  FUZZ_CHECK(fuzz::accepts([&] { url = shown_url(text); }), "shown_url threw");
  FUZZ_CHECK(shown_text(once) == once, "masked twice: " + once);
  FUZZ_CHECK(shown_url(url) == url, "masked twice: " + url);
  if (text.find("://") == std::string::npos && text.find('|') == std::string::npos) {
    FUZZ_CHECK(once == text, "changed without a URL: " + once);
  }
  const size_t held = count(text, kSecret);
  for (const std::string& planted :
       {" http://user:" + std::string(kSecret) + "@host/",
        " redis://host|bearer-token=" + std::string(kSecret) + "|keep-alive=true"}) {
    const std::string shown = shown_text(text + planted);
    FUZZ_CHECK(count(shown, kSecret) <= held, "the planted secret shows: " + shown);
  }
  return 0;
}
