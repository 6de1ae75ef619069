// A lock file's holder ("<pid> <host>\n"), written by another ascend-setup,
// maybe on another host sharing the cache mount, maybe torn by a crash.
// Invariants: nothing throws; the pid is 0 or a pid; the host has no blanks
// or line breaks; what was read, written out again, reads the same.
#include "base/tree/file_lock.hpp"
#include "fuzz_support.hpp"

#include <limits>

using namespace ascend_setup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  LockHolder holder;
  FUZZ_CHECK(fuzz::accepts([&] { holder = parse_lock_holder(fuzz::as_text(data, size)); }),
             "parse_lock_holder threw");
  FUZZ_CHECK(holder.pid >= 0 && holder.pid <= std::numeric_limits<pid_t>::max(),
             "pid " + std::to_string(holder.pid));
  FUZZ_CHECK(holder.host.find_first_of(" \t\r\n") == std::string::npos, "host " + holder.host);
  if (holder.pid > 0) {
    const LockHolder reread =
        parse_lock_holder(std::to_string(holder.pid) + " " + holder.host + "\n");
    FUZZ_CHECK(reread.pid == holder.pid && reread.host == holder.host,
               "the holder " + std::to_string(holder.pid) + " " + holder.host +
                   " reads otherwise when written out again");
  }
  return 0;
}
