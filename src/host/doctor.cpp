#include "host/doctor.hpp"

#include "base/layer/llvm_package.hpp"
#include "base/layer/patch_files.hpp"
#include "base/layer/profile_choice.hpp"

#include "base/git/hunk_check.hpp"
#include "base/git/source_repo.hpp"
#include "base/tree/cmake_sources.hpp"
#include "base/tree/patch_engine.hpp"
#include "base/util/error.hpp"
#include "base/util/github_actions.hpp"
#include "base/util/strings.hpp"
#include "base/util/whole_file.hpp"
#include "host/layer/carried_layer.hpp"
#include "host/layer/patch_points.hpp"
#include "host/python/captured_setup.hpp"
#include "host/python/process_refusal.hpp"
#include "host/python/setup_py_source.hpp"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <set>

namespace py = pybind11;
namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

const char* const group_order[] = {"setup.py", "patch points", "imports", "version",
                                   "llvm",     "patches",      "tools",   "cmake"};

// Where upstream resolves its packages since it moved them out of setup.py.
constexpr const char* kUpstreamHelper = "python/build_helpers.py";
constexpr const char* kLlvmResolver = "def get_llvm_package_info";

std::string python_error_line(py::error_already_set& error) {
  return py::str(py::type::of(error.value()).attr("__name__")).cast<std::string>() + ": " +
         py::str(error.value()).cast<std::string>();
}

class Doctor {
 public:
  Doctor(const fs::path& tree_root, const fs::path& setup_py, const Profile& profile,
         std::optional<BuildMode> forced_mode)
      : root_(tree_root), setup_py_(setup_py), profile_(profile), forced_mode_(forced_mode) {}

  DoctorReport run() {
    report_.tree_root = root_;
    report_.setup_py = setup_py_;
    report_.profile_name = profile_.name;
    report_.profile_source = profile_.source;
    report_.profile_chosen_because = profile_.chosen_because;
    check_setup_py();
    report_.layer = describe_layer();
    check_version_files();
    check_llvm();
    check_patches();
    check_tools();
    check_cmake();
    std::stable_sort(report_.findings.begin(), report_.findings.end(),
                     [](const DoctorFinding& a, const DoctorFinding& b) {
                       auto rank = [](const std::string& group) {
                         return std::find(std::begin(group_order), std::end(group_order), group) -
                                std::begin(group_order);
                       };
                       return rank(a.group) < rank(b.group);
                     });
    return std::move(report_);
  }

 private:
  void add(std::string group, std::string kind, std::string subject, std::string message,
           nlohmann::ordered_json details = nlohmann::ordered_json::object()) {
    report_.findings.push_back({std::move(group), std::move(kind), std::move(subject),
                                std::move(message), std::move(details)});
  }

  void add_patch_points(const std::vector<PatchPointFinding>& findings, const char* seen_by) {
    for (const auto& finding : findings) {
      const bool known = std::any_of(
          report_.findings.begin(), report_.findings.end(), [&](const DoctorFinding& other) {
            return other.group == "patch points" && other.subject == finding.subject;
          });
      if (!known) {
        add("patch points", finding.kind, finding.subject, finding.message,
            {{"patch_point", finding.id}, {"overrides", finding.overrides}, {"seen_in", seen_by}});
      }
    }
  }

  void check_setup_py() {
    const ProcessRefusal no_processes;  // setup.py's own processes could write
    std::optional<SetupPySource> source;
    try {
      source = read_setup_py_source(setup_py_, profile_.upstream.version_variable);
    } catch (py::error_already_set& error) {
      add("setup.py", "unreadable", setup_py_.string(),
          "setup.py cannot be parsed: " + python_error_line(error));
      return;
    }
    add_patch_points(check_patch_points(profile_, source_symbols(*source)).findings, "source");

    const auto imports = failing_imports(*source, setup_py_);
    for (const auto& [entry, what] : imports) {
      add("imports", "failing-import", entry.module,
          "setup.py line " + std::to_string(entry.line) + " imports " + entry.module +
              ", which fails here: " + what,
          {{"line", entry.line}, {"error", what}});
    }

    const std::string& wanted = profile_.upstream.version;
    const std::string& variable = profile_.upstream.version_variable;
    if (!source->version) {
      add("version", "no-version", variable,
          "setup.py sets no " + variable + " from a string literal: upstream's version is unknown");
    } else if (*source->version != wanted) {
      add("version", "upstream-version", variable,
          "setup.py's " + variable + " is " + *source->version + ", the profile " + profile_.name +
              " is for upstream " + wanted,
          {{"found", *source->version}, {"expected", wanted}});
    }

    if (!imports.empty()) {
      return;  // loading would fail on the first of those imports
    }
    try {
      CapturedSetup captured = capture_setup(setup_py_);
      add_patch_points(check_patch_points(profile_, live_symbols(captured.module)).findings,
                       "loaded module");
      carried_ = carried_layer_evidence(captured.module, captured.kwargs, profile_);
      if (!carried_.empty()) {
        add("setup.py", "layer-in-setup-py", setup_py_.string(),
            carried_layer_message(carried_.front()),
            {{"evidence", carried_}, {"build_with", carried_layer_build_command}});
      }
    } catch (py::error_already_set& error) {
      add("setup.py", "does-not-load", setup_py_.string(),
          "setup.py does not load here (only its source was checked): " + python_error_line(error));
    } catch (const Error& error) {
      add("setup.py", "does-not-load", setup_py_.string(), error.what());
    }
  }

  void check_version_files() {
    const std::string& wanted = profile_.upstream.version;
    const auto version_txt = read_whole_file(root_ / profile_.version.file);
    if (!version_txt) {
      add("version", "no-version-file", profile_.version.file,
          profile_.version.file + " is missing at the tree root");
    } else if (trim(*version_txt) != wanted) {
      add("version", "version-file", profile_.version.file,
          profile_.version.file + " says " + trim(*version_txt) + ", the profile " + profile_.name +
              " is for " + wanted,
          {{"found", trim(*version_txt)}, {"expected", wanted}});
    }
    const std::string pin = profile_.upstream.pin + "==";
    for (const auto& [arch, requirements] : profile_.metadata.install_requires_by_arch) {
      for (const std::string& requirement : requirements) {
        if (requirement.rfind(pin, 0) == 0 && requirement.substr(pin.size()) != wanted) {
          add("version", "pin", requirement,
              "the profile pins " + requirement + " for " + arch + ", its upstream is " + wanted,
              {{"found", requirement.substr(pin.size())}, {"expected", wanted}});
        }
      }
    }
  }

  void check_patches() {
    const auto repo = SourceRepo::open(root_);
    std::set<std::string> unfit;
    bool patch_missing = false;  // then the patch state cannot be worked out: said once
    for (const ProfilePatchFile& patch_file : profile_patch_files(profile_, std::nullopt)) {
      const PatchFile* entry = patch_file.entry;
      const fs::path path = root_ / patch_file.relative;
      const std::string relative = patch_file.relative.string();
      const auto text = read_whole_file(path);
      if (!text) {
        if (!entry->optional) {
          add("patches", "missing-patch", relative,
              relative + " (named by the profile) is missing");
          patch_missing = true;
        }
        continue;
      }
      if (!entry->checkout.empty() && !fs::is_directory(root_ / entry->checkout)) {
        add("patches", "missing-checkout", entry->checkout,
            relative + " applies inside " + entry->checkout + ", which is missing");
        patch_missing = true;
        continue;
      }
      std::vector<DiffFile> files;
      try {
        files = parse_unified_diff(*text, relative);
        place_under(files, entry->checkout);
      } catch (const Error& error) {
        add("patches", "malformed-patch", relative, error.what());
        continue;
      }
      for (const DiffFile& file : files) {
        auto content =
            repo ? repo->committed_file(file.old_path) : read_whole_file(root_ / file.old_path);
        if (content && entry->crlf_to_lf) {
          content = lf_line_endings(*content);  // as the engine applies it
        }
        for (const HunkResult& hunk : failing_hunks(file, content)) {
          unfit.insert(file.path);
          nlohmann::ordered_json details = {{"patch", relative}, {"file", file.path}};
          std::string kind = "missing-file";
          if (!hunk.header.empty()) {
            details["hunk"] = hunk.header;
            kind = hunk.fit == HunkFit::already_applied ? "already-applied" : "stale-hunk";
          }
          if (hunk.fit == HunkFit::does_not_apply && !hunk.header.empty()) {
            details["line"] = hunk.line;
            details["expected"] = hunk.expected;
            details["found"] =
                hunk.at_end ? nlohmann::ordered_json() : nlohmann::ordered_json(hunk.found);
          }
          add("patches", kind, file.path,
              entry->file + ": " + hunk.describe() + (repo ? " (committed content)" : ""),
              std::move(details));
        }
      }
    }
    check_unused_patches();
    if (!repo || patch_missing) {
      return;
    }
    // Local edits: a separate finding, for files whose patches fit upstream.
    try {
      const ModeChoice mode = choose_build_mode(forced_mode_, profile_, root_);
      PatchEngine engine(root_, profile_, mode.mode, PatchEngine::default_state_dir(root_));
      for (const auto& [file, status] : engine.status().files) {
        if (status == FileStatus::locally_modified && unfit.count(file) == 0) {
          add("patches", "local-edit", file,
              file +
                  " has uncommitted edits that overlap a patch hunk (commit or stash them, "
                  "or build with --force-patches)");
        }
      }
    } catch (const Error& error) {
      add("patches", "status-unknown", profile_.patches.directory,
          std::string("the patch state cannot be worked out: ") + error.what());
    }
  }

  // A patch in the patch directory that the profile applies in no mode (the
  // LLVM patches, which name the LLVM package, aside): a patch of another
  // line, or a nested one the profile does not know.
  void check_unused_patches() {
    std::set<std::string> named;
    for (const ProfilePatchFile& patch_file : profile_patch_files(profile_, std::nullopt)) {
      named.insert(patch_file.relative.lexically_normal().string());
    }
    std::error_code ec;
    std::vector<std::string> unused;
    for (fs::directory_iterator it(root_ / profile_.patches.directory, ec), end; !ec && it != end;
         it.increment(ec)) {
      const std::string name = it->path().filename().string();
      const fs::path relative = (fs::path(profile_.patches.directory) / name).lexically_normal();
      const bool llvm = fs::path(profile_.llvm.patch_dir).lexically_normal() ==
                            fs::path(profile_.patches.directory).lexically_normal() &&
                        name.starts_with(profile_.llvm.patch_prefix);
      if (it->path().extension() == ".patch" && !llvm && named.count(relative.string()) == 0) {
        unused.push_back(relative.string());
      }
    }
    std::sort(unused.begin(), unused.end());
    for (const std::string& relative : unused) {
      add("patches", "unused-patch", relative,
          relative + " is in the patch directory, but the profile " + profile_.name +
              " applies it in no build mode (a patch of another upstream version, or one the "
              "profile lacks under [patches])");
    }
  }

  // Each tool the profile copies next to the extension must be a target of
  // the tree's CMake project: one that no CMake file names is not built.
  void check_tools() {
    const std::vector<std::string> code = cmake_code(root_);
    for (const std::string& tool : profile_.build.tools) {
      const std::string target = fs::path(tool).filename().string();
      if (std::none_of(code.begin(), code.end(),
                       [&](const std::string& text) { return names_word(text, target); })) {
        add("tools", "tool-not-built", tool,
            tool +
                " ([build] tools of the profile) is built by no CMake file of the tree: no "
                "target " +
                target + " (a tool upstream dropped?)");
      }
    }
  }

  // The LLVM package: its revision readable as the profile reads it, and
  // resolved where the profile says the tree resolves its packages.
  void check_llvm() {
    const Profile::Llvm& llvm = profile_.llvm;
    try {
      llvm_revision(llvm, root_);
    } catch (const Error& error) {
      add("llvm", "llvm-revision", llvm.hash_file,
          std::string(error.what()) + " ([llvm] hash_file" +
              (llvm.hash_key.empty() ? "" : ", hash_key") + " of the profile)");
    }
    // `file` relative to the tree, or absolute.
    const auto holds_resolver = [&](const fs::path& file) {
      const auto text = read_whole_file(root_ / file);
      return text && text->find(kLlvmResolver) != std::string::npos;
    };
    if (llvm.resolved_by_setup_py()) {
      if (!holds_resolver(setup_py_) && holds_resolver(kUpstreamHelper)) {
        add("llvm", "resolved-in-helper", kUpstreamHelper,
            std::string(kUpstreamHelper) +
                " resolves the packages, not setup.py: CMake runs it as a process of its own, "
                "which no patch of setup.py's module reaches; a profile whose [llvm] "
                "resolved_in names it has ascend-setup hand CMake the LLVM");
      }
    } else if (!holds_resolver(llvm.resolved_in)) {
      add("llvm", "no-resolver", llvm.resolved_in,
          llvm.resolved_in + " ([llvm] resolved_in of the profile) " +
              (fs::exists(root_ / llvm.resolved_in) ? "defines no get_llvm_package_info"
                                                    : "is missing") +
              ": the tree resolves its packages elsewhere");
    }
  }

  void check_cmake() {
    std::string flag = profile_.build.distributed_arg;
    if (flag.rfind("-D", 0) == 0) {
      flag = flag.substr(2);
    }
    flag = flag.substr(0, flag.find_first_of(":="));
    const auto lists = read_whole_file(root_ / profile_.upstream.cmake_lists);
    if (!lists) {
      add("cmake", "missing-file", profile_.upstream.cmake_lists,
          profile_.upstream.cmake_lists +
              " is missing: the profile's CMake switches cannot be "
              "checked");
    } else if (lists->find(flag) == std::string::npos) {
      add("cmake", "unknown-switch", flag,
          profile_.upstream.cmake_lists + " no longer mentions " + flag +
              " ([build] distributed_arg of the profile): the switch would be ignored",
          {{"file", profile_.upstream.cmake_lists}});
    }
  }

  std::string describe_layer() const {
    if (!carried_.empty()) {
      return "in setup.py (" + carried_.front() +
             "): setup.py carries the layer itself, and ascend-setup refuses to apply it a "
             "second time";
    }
    const Profile::Layer& layer = profile_.layer;
    std::string text = layer.form;
    if (const auto marker = layer_marker_held(profile_, root_)) {
      text += " (the tree holds " + *marker + ")";
    }
    if (!layer.in_tree_modules.empty()) {
      text += ": the tree carries the layer itself; while ascend-setup runs setup.py its hooks (" +
              join(layer.in_tree_hooks) + " of " + layer.in_tree_modules.front() +
              ") do nothing, and ascend-setup applies the layer once, natively";
    }
    return text;
  }

  fs::path root_, setup_py_;
  const Profile& profile_;
  std::optional<BuildMode> forced_mode_;
  std::vector<std::string> carried_;  // evidence that setup.py carries the layer
  DoctorReport report_;
};

}  // namespace

DoctorReport run_doctor(const fs::path& tree_root, const fs::path& setup_py, const Profile& profile,
                        std::optional<BuildMode> forced_mode) {
  return Doctor(tree_root, setup_py, profile, forced_mode).run();
}

void print_doctor_text(const DoctorReport& report, std::ostream& out) {
  out << "tree " << report.tree_root.string() << "\n";
  out << "setup.py " << report.setup_py.string() << "\n";
  out << "profile " << report.profile_name << " (" << report.profile_source << ")";
  if (!report.profile_chosen_because.empty()) {
    out << ": " << report.profile_chosen_because;
  }
  out << "\n";
  out << "layer " << report.layer << "\n";
  if (report.healthy()) {
    out << "healthy: the tree fits the profile\n";
    return;
  }
  std::string group;
  for (const DoctorFinding& finding : report.findings) {
    if (finding.group != group) {
      group = finding.group;
      out << group << ":\n";
    }
    out << "  " << finding.kind << ": " << finding.message << "\n";
  }
  out << report.findings.size() << " finding" << (report.findings.size() == 1 ? "" : "s") << "\n";
}

std::vector<std::string> doctor_annotations(const DoctorReport& report) {
  std::vector<std::string> annotations;
  for (const DoctorFinding& finding : report.findings) {
    std::string file;
    if (const auto named = finding.details.find("file");
        named != finding.details.end() && named->is_string()) {
      file = named->get<std::string>();
    } else if (finding.group == "setup.py" || finding.group == "imports" ||
               finding.group == "version" || finding.group == "patch points") {
      const auto relative = report.setup_py.lexically_relative(report.tree_root);
      file = relative.empty() || *relative.begin() == ".." ? report.setup_py.string()
                                                           : relative.string();
    }
    int line = 0;
    if (const auto at = finding.details.find("line");
        at != finding.details.end() && at->is_number_integer()) {
      line = at->get<int>();
    }
    annotations.push_back(error_annotation(file, line, finding.group + ": " + finding.message));
  }
  return annotations;
}

nlohmann::ordered_json doctor_json(const DoctorReport& report) {
  nlohmann::ordered_json json = {{"healthy", report.healthy()},
                                 {"tree", report.tree_root.string()},
                                 {"setup_py", report.setup_py.string()},
                                 {"profile",
                                  {{"name", report.profile_name},
                                   {"source", report.profile_source},
                                   {"chosen_because", report.profile_chosen_because}}},
                                 {"layer", report.layer}};
  json["findings"] = nlohmann::ordered_json::array();
  for (const DoctorFinding& finding : report.findings) {
    nlohmann::ordered_json entry = {{"group", finding.group},
                                    {"kind", finding.kind},
                                    {"subject", finding.subject},
                                    {"message", finding.message}};
    for (const auto& [key, value] : finding.details.items()) {
      entry[key] = value;
    }
    json["findings"].push_back(std::move(entry));
  }
  return json;
}

}  // namespace ascend_setup
