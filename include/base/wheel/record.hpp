// A wheel's RECORD (PEP 376/427) as the wheel package writes and reads it:
// "path,sha256=<urlsafe base64 without padding>,size" lines, csv-quoted where
// a field holds a comma, a quote or a line break, RECORD itself last with no
// hash or size.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ascend_setup {

std::string urlsafe_b64_nopad(std::string_view bytes);

struct RecordRow {
  std::string path;
  std::string hash;  // "sha256=..." or empty
  std::string size;  // decimal or empty
};

std::string format_record(const std::vector<RecordRow>& rows);
// Rows by path; lines that are not three csv fields are skipped.
std::map<std::string, RecordRow> parse_record(std::string_view text);

}  // namespace ascend_setup
