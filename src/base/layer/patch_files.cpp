#include "base/layer/patch_files.hpp"

namespace ascend_setup {

std::vector<ProfilePatchFile> profile_patch_files(const Profile& profile,
                                                  std::optional<BuildMode> mode) {
  const std::filesystem::path directory = profile.patches.directory;
  std::vector<ProfilePatchFile> files = {
      {"main", &profile.patches.main, directory / profile.patches.main.file}};
  if (!mode || *mode == BuildMode::dev) {
    files.push_back({"dev", &profile.patches.dev, directory / profile.patches.dev.file});
  }
  for (const PatchFile& nested : profile.patches.nested) {
    files.push_back({"nested", &nested, directory / nested.file});
  }
  return files;
}

}  // namespace ascend_setup
