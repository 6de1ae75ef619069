// A venv's pyvenv.cfg ("key = value" lines: home, version or version_info,
// implementation), read to find the venv's interpreter. Invariants: nothing
// throws; a version read is "X.Y" in digits; the implementation is in lower
// case; what was read, written out again as a pyvenv.cfg, reads the same.
#include "base/launch/interpreter.hpp"
#include "fuzz_support.hpp"

#include <cctype>

using namespace ascend_setup;

namespace {

bool major_minor(const std::string& version) {
  const auto dot = version.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == version.size()) {
    return false;
  }
  for (std::size_t i = 0; i < version.size(); ++i) {
    if (i != dot && !std::isdigit(static_cast<unsigned char>(version[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  PyvenvCfg cfg;
  FUZZ_CHECK(fuzz::accepts([&] { cfg = parse_pyvenv_cfg(fuzz::as_text(data, size)); }),
             "parse_pyvenv_cfg threw");
  FUZZ_CHECK(cfg.version.empty() || major_minor(cfg.version), "version " + cfg.version);
  for (const char c : cfg.implementation) {
    FUZZ_CHECK(!std::isupper(static_cast<unsigned char>(c)),
               "implementation " + cfg.implementation);
  }
  if (cfg.home && cfg.home->find_first_of("\r\n") != std::string::npos) {
    fuzz::fail("a home of more than one line: " + *cfg.home);
  }
  std::string again;
  if (cfg.home) {
    again += "home = " + *cfg.home + "\n";
  }
  if (!cfg.version.empty()) {
    again += "version = " + cfg.version + "\n";
  }
  if (!cfg.implementation.empty() && cfg.implementation.find('\n') == std::string::npos) {
    again += "implementation = " + cfg.implementation + "\n";
  }
  const PyvenvCfg reread = parse_pyvenv_cfg(again);
  FUZZ_CHECK(reread.home == cfg.home && reread.version == cfg.version &&
                 reread.implementation == cfg.implementation,
             "written out again as\n" + again + "it reads otherwise");
  return 0;
}
