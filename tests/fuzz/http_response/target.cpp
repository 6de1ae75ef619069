// A server's answer as the downloader reads it: the status line and header
// lines libcurl hands over (read_header_line), and Content-Range
// (parse_content_range). The input is the header lines, each ending at \n
// (given on with its \n, a \r before it kept). Invariants: nothing throws;
// a status is 0 or 100 to 999; kept values have no blanks around them; a
// status line forgets the previous response's headers; a Content-Range that
// parses is a range of its total, and written out again parses the same.
#include "base/download/http_download.hpp"
#include "fuzz_support.hpp"

#include <fmt/format.h>

using namespace ascend_setup;

namespace {

bool trimmed(const std::string& text) {
  return text.empty() || (text.front() != ' ' && text.front() != '\t' && text.back() != ' ' &&
                          text.back() != '\t' && text.back() != '\r' && text.back() != '\n');
}

void check_range(std::string_view text) {
  std::optional<ContentRange> range;
  FUZZ_CHECK(fuzz::accepts([&] { range = parse_content_range(text); }),
             "parse_content_range threw");
  if (!range) {
    return;
  }
  FUZZ_CHECK(range->first <= range->last, std::string(text));
  FUZZ_CHECK(!range->total || *range->total > range->last, std::string(text));
  const std::string again =
      fmt::format("bytes {}-{}/{}", range->first, range->last,
                  range->total ? std::to_string(*range->total) : std::string("*"));
  const auto reread = parse_content_range(again);
  FUZZ_CHECK(reread && reread->first == range->first && reread->last == range->last &&
                 reread->total == range->total,
             std::string(text) + " written out again as " + again + " reads otherwise");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest = fuzz::as_text(data, size);
  ResponseHeaders headers;
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const std::string_view line =
        rest.substr(0, end == std::string_view::npos ? rest.size() : end + 1);
    rest.remove_prefix(line.size());
    FUZZ_CHECK(fuzz::accepts([&] { read_header_line(line, headers); }), "read_header_line threw");
    FUZZ_CHECK(headers.status == 0 || (headers.status >= 100 && headers.status <= 999),
               "status " + std::to_string(headers.status) + " from " + std::string(line));
    FUZZ_CHECK(
        trimmed(headers.etag) && trimmed(headers.last_modified) && trimmed(headers.content_range),
        "a header kept with blanks around it: " + std::string(line));
    if (line.starts_with("HTTP/")) {
      FUZZ_CHECK(headers.etag.empty() && headers.last_modified.empty() &&
                     headers.content_range.empty() && !headers.content_length,
                 "a status line kept the previous response's headers");
    }
    check_range(line);
  }
  check_range(headers.content_range);
  return 0;
}
