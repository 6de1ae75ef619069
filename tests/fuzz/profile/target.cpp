// The profile (TOML, profiles/*.toml or a user's --profile FILE). Invariants:
// only Error refuses a profile; a profile that parses validates again, to the
// same Profile, once its TOML is written out again by toml++ (what the parser
// read is the document, not an accident of its spelling).
#include "base/layer/profile.hpp"
#include "fuzz_support.hpp"

#include <toml++/toml.h>

#include <optional>
#include <sstream>

using namespace ascend_setup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fuzz::as_text(data, size));
  const auto first = fuzz::parsed([&] { return parse_profile(text, "fuzz.toml"); });
  if (!first) {
    return 0;
  }
  std::ostringstream rewritten;
  rewritten << toml::toml_formatter(
      toml::parse(std::string_view(text), std::string_view("fuzz.toml")));
  const auto second = fuzz::parsed([&] { return parse_profile(rewritten.str(), "fuzz.toml"); });
  FUZZ_CHECK(second.has_value(),
             "the profile, written out again by toml++, is refused:\n" + rewritten.str());
  FUZZ_CHECK(*first == *second,
             "the profile written out again parses to another Profile:\n" + rewritten.str());
  return 0;
}
