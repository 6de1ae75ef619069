// /proc/<pid>/stat, "pid (comm) state ppid ...", whose comm is the process's
// name: any bytes a process gives itself, blanks and ')' included. Invariants:
// nothing throws; whatever the text, a parsed parent is not negative; and a
// stat line made with the input as comm and a state and parent taken from
// the input reads back exactly that state and parent.
#include "base/process/descendants.hpp"
#include "fuzz_support.hpp"

using namespace ascend_setup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  std::optional<ProcessState> parsed;
  FUZZ_CHECK(fuzz::accepts([&] { parsed = parse_proc_stat(text); }), "parse_proc_stat threw");
  if (parsed) {
    FUZZ_CHECK(parsed->parent >= 0, "a negative parent");
  }
  if (size < 3) {
    return 0;
  }
  const char state = "RSDZTtXxKWPI"[data[0] % 12];
  const pid_t parent = static_cast<pid_t>((data[1] << 8 | data[2]) + 1);
  const std::string comm(text.substr(3).substr(0, 15));  // the kernel keeps 15 bytes
  const std::string line = "4242 (" + comm + ") " + state + " " + std::to_string(parent) +
                           " 4242 4242 0 -1 4194560 100 0 0 0 0\n";
  const auto reread = parse_proc_stat(line);
  FUZZ_CHECK(reread && reread->state == state && reread->parent == parent,
             "the stat line of a process named '" + comm + "' reads otherwise");
  return 0;
}
