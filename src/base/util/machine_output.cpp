#include "base/util/machine_output.hpp"

#include "base/util/error.hpp"
#include "base/util/shown_url.hpp"
#include "base/util/whole_file.hpp"

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
    throw Error(std::string("cannot keep stdout for the machine output: ") + std::strerror(errno),
                ErrorKind::local_io);
  }
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    throw Error(std::string("cannot send other output to stderr: ") + std::strerror(errno),
                ErrorKind::local_io);
  }
}

void MachineOutput::write(std::string_view text) const {
  write_fully(fd_, shown_text(text), "stdout");
}

}  // namespace ascend_setup
