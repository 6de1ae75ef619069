#include "ascend_setup/machine_output.hpp"

#include "ascend_setup/error.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

namespace ascend_setup {

MachineOutput::MachineOutput() {
  std::cout.flush();
  std::fflush(stdout);
  fd_ = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd_ < 0) {
    throw Error(std::string("cannot keep stdout for the machine output: ") + std::strerror(errno));
  }
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    throw Error(std::string("cannot send other output to stderr: ") + std::strerror(errno));
  }
}

void MachineOutput::write(std::string_view text) const {
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw Error(std::string("cannot write the machine output to stdout: ") +
                  std::strerror(errno));
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace ascend_setup
