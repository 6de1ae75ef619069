// Owning a file descriptor or a FILE*: the one RAII every unit uses. The
// destructor closes what is still owned and ignores close's result (nothing
// may throw there); where a write was made, call close() and check it, since
// close may be the first to report a failed write (NFS, a full disk).
#pragma once

#include <cstdio>
#include <utility>

namespace ascend_setup {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset(other.release());
    }
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }

  // Gives up ownership: the caller closes the returned fd.
  int release() noexcept { return std::exchange(fd_, -1); }

  // Closes the owned fd (if any, result ignored) and owns `fd` instead.
  void reset(int fd = -1) noexcept;

  // Closes the owned fd now; false with errno set when close failed (the
  // fd is released either way, as POSIX leaves it on Linux). True when
  // nothing was owned.
  bool close() noexcept;

 private:
  int fd_ = -1;
};

class UniqueFile {
 public:
  UniqueFile() = default;
  explicit UniqueFile(std::FILE* file) noexcept : file_(file) {}
  UniqueFile(const UniqueFile&) = delete;
  UniqueFile& operator=(const UniqueFile&) = delete;
  UniqueFile(UniqueFile&& other) noexcept : file_(std::exchange(other.file_, nullptr)) {}
  UniqueFile& operator=(UniqueFile&& other) noexcept {
    if (this != &other) {
      close();
      file_ = std::exchange(other.file_, nullptr);
    }
    return *this;
  }
  ~UniqueFile() { close(); }

  std::FILE* get() const noexcept { return file_; }
  explicit operator bool() const noexcept { return file_ != nullptr; }

  // fclose now; false with errno set when it failed (a buffered write that
  // could not be flushed). True when nothing was owned.
  bool close() noexcept;

 private:
  std::FILE* file_ = nullptr;
};

}  // namespace ascend_setup
