// A private directory under $TMPDIR (ascend-setup-patch-<pid>-XXXXXX),
// removed with everything in it when the object dies: on success, on an
// Error and on a stop signal (which unwinds). Ones left by a killed run (its
// pid no longer running) are removed when the next one is made.
#pragma once

#include <filesystem>

namespace ascend_setup {

class ScratchDir {
 public:
  ScratchDir();
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ascend_setup
