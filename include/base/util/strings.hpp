// Small string helpers shared by the host and the overrides.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ascend_setup {

// Every occurrence of `from` in `text` replaced by `to` (left to right, the
// replacement not searched again).
std::string replace_all(std::string text, const std::string& from, const std::string& to);

// `text` with every CRLF made LF (a nested patch's crlf_to_lf: what the patch
// engine applies to and what the doctor checks hunks against).
std::string lf_line_endings(std::string text);

// Each `{NAME}` in `text` replaced by values[NAME] (the profile's templates,
// e.g. "{HITEST_HOME}/bin").
std::string expand_placeholders(std::string text, const std::map<std::string, std::string>& values);

// `text` without the leading and trailing characters of `blanks`: the one
// trim every unit uses.
std::string trim(std::string_view text, std::string_view blanks = " \t\r\n");

// A byte count in "12.3 MiB" style (B, KiB, MiB, GiB, TiB).
std::string human_bytes(double bytes);

// The items with `separator` between them.
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace ascend_setup
