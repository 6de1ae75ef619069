// `ascend-setup --doctor`: in one run, every reason the tree does not fit the
// profile, and nothing written (no build directory, no patched file, no git
// change). Groups, in this order: setup.py (unreadable, does not load,
// carries the Ascend layer itself), patch points (from the source with
// `ast`, and from the loaded module's live signatures when it loads),
// imports, version, patches (per hunk, against the committed content; local
// edits apart), cmake (profile switches the tree's CMake no longer knows).
// Needs a started embedded interpreter and the tree root as the current
// directory.
#pragma once

#include "base/layer/build_mode.hpp"
#include "base/layer/profile.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ascend_setup {

struct DoctorFinding {
  std::string group;    // setup.py, patch points, imports, version, patches, cmake
  std::string kind;     // e.g. missing, changed-kind, missing-parameter, failing-import
  std::string subject;  // the name, module, file or switch concerned
  std::string message;  // one line
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
};

struct DoctorReport {
  std::filesystem::path tree_root, setup_py;
  std::string profile_name, profile_source, profile_chosen_because;
  // The layer's form (profile [layer]), or "in setup.py" when setup.py
  // carries the layer itself (then a finding too); one line of the report.
  std::string layer;
  std::vector<DoctorFinding> findings;
  bool healthy() const { return findings.empty(); }
};

DoctorReport run_doctor(const std::filesystem::path& tree_root,
                        const std::filesystem::path& setup_py, const Profile& profile,
                        std::optional<BuildMode> forced_mode);

// Grouped, one line per finding (doc/upgrading.md).
void print_doctor_text(const DoctorReport& report, std::ostream& out);
// The JSON shape documented in doc/upgrading.md.
nlohmann::ordered_json doctor_json(const DoctorReport& report);

// One GitHub Actions error annotation per finding (util/github_actions.hpp):
// its file (the details' "file", else setup.py for the findings about it),
// relative to the tree root, and its line when the details have one.
std::vector<std::string> doctor_annotations(const DoctorReport& report);

}  // namespace ascend_setup
