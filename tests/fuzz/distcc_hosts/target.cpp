// The distcc host list (ASCEND_SETUP_DISTCC_HOSTS, DISTCC_HOSTS), distcc's
// grammar. Invariants: only Error refuses a list; every host has a port of 1
// to 65535 and at least one slot, a local host names no host and an ssh or
// TCP host does; the hosts' specs and the options, written out again, parse
// to the same hosts (what the build is given is what was read).
#include "base/jobs/compile_cluster.hpp"
#include "fuzz_support.hpp"

using namespace ascend_setup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fuzz::as_text(data, size));
  const auto parsed = fuzz::parsed([&] { return parse_distcc_hosts(text); });
  if (!parsed) {
    return 0;
  }
  const DistccHosts& hosts = *parsed;
  std::string again;
  for (const DistccHost& host : hosts.hosts) {
    FUZZ_CHECK(host.port >= 1 && host.port <= 65535, host.spec);
    FUZZ_CHECK(host.limit >= 1, host.spec);
    FUZZ_CHECK((host.kind == DistccHost::Kind::local) == host.host.empty(), host.spec);
    FUZZ_CHECK(!host.spec.empty() && host.spec.find_first_of(" \t\n#") == std::string::npos,
               "a spec holds a separator: " + host.spec);
    again += host.spec + " ";
  }
  for (const std::string& option : hosts.options) {
    again += option + " ";
  }
  DistccHosts reread;
  FUZZ_CHECK(fuzz::accepts([&] { reread = parse_distcc_hosts(again); }),
             "the hosts written out again are refused: " + again);
  FUZZ_CHECK(reread.options == hosts.options, again);
  FUZZ_CHECK(reread.hosts.size() == hosts.hosts.size(), again);
  for (size_t i = 0; i < hosts.hosts.size(); ++i) {
    const DistccHost& a = hosts.hosts[i];
    const DistccHost& b = reread.hosts[i];
    FUZZ_CHECK(a.spec == b.spec && a.kind == b.kind && a.host == b.host && a.port == b.port &&
                   a.limit == b.limit,
               "a host reads differently when written out again: " + a.spec);
  }
  return 0;
}
