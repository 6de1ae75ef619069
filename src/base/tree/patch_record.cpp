#include "base/tree/patch_record.hpp"

#include "base/util/digest.hpp"
#include "base/util/error.hpp"
#include "base/util/whole_file.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace fs = std::filesystem;

namespace ascend_setup {

namespace {

constexpr int state_format = 1;

std::optional<std::string> file_sha256(const fs::path& path) {
  const auto bytes = read_whole_file(path);
  return bytes ? std::optional(sha256_hex(*bytes)) : std::nullopt;
}

}  // namespace

bool PatchText::touches(const std::string& file) const {
  return std::find(files.begin(), files.end(), file) != files.end();
}

PatchText PatchText::read(std::string name, fs::path origin, std::string text,
                          std::string checkout) {
  PatchText patch{std::move(name),    std::move(origin), std::move(text), {}, {}, {}, {},
                  std::move(checkout)};
  patch.sha256 = sha256_hex(patch.text);
  return patch;
}

PatchText PatchText::parse(std::string name, fs::path origin, std::string text,
                           std::string checkout) {
  PatchText patch = read(std::move(name), std::move(origin), std::move(text), std::move(checkout));
  patch.parse_files();
  return patch;
}

void PatchText::parse_files() {
  diff = parse_unified_diff(text, origin.string());
  place_under(diff, checkout);
  files.clear();
  created.clear();
  for (const DiffFile& file : diff) {
    for (const std::string& path : {file.old_path, file.path}) {
      if (!touches(path)) {
        files.push_back(path);
      }
    }
    if (file.created) {
      created.insert(file.path);
    }
  }
}

std::vector<PatchText> PatchRecord::patches() const {
  std::vector<PatchText> patches;
  const auto text = read_whole_file(state_dir_ / "state.json");
  if (!text) {
    return patches;
  }
  try {
    const auto state = nlohmann::json::parse(*text);
    if (state.at("format").get<int>() != state_format) {
      return {};
    }
    for (const auto& entry : state.at("patches")) {
      const std::string name = entry.at("name").get<std::string>();
      const fs::path copy = state_dir_ / "applied" / name;
      const auto patch_text = read_whole_file(copy);
      if (!patch_text || sha256_hex(*patch_text) != entry.at("sha256").get<std::string>()) {
        spdlog::warn("the record of applied patches in {} is incomplete: ignored",
                     state_dir_.string());
        return {};
      }
      patches.push_back(
          PatchText::parse(name, copy, *patch_text, entry.value("checkout", std::string())));
      patches.back().crlf_to_lf = entry.value("crlf_to_lf", false);
    }
  } catch (const nlohmann::json::exception&) {
    spdlog::warn("the record of applied patches {} is unreadable: ignored",
                 (state_dir_ / "state.json").string());
    return {};
  }
  return patches;
}

bool PatchRecord::matches(const std::vector<PatchText>& wanted, const fs::path& tree_root) const {
  const auto text = read_whole_file(state_dir_ / "state.json");
  if (!text) {
    return false;
  }
  const auto state = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!state.is_object() || state.value("format", 0) != state_format ||
      !state.contains("patches") || !state.contains("files") ||
      state["patches"].size() != wanted.size()) {
    return false;
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto& entry = state["patches"][i];
    if (entry.value("name", "") != wanted[i].name ||
        entry.value("sha256", "") != wanted[i].sha256 ||
        entry.value("checkout", "") != wanted[i].checkout ||
        entry.value("crlf_to_lf", false) != wanted[i].crlf_to_lf) {
      return false;
    }
  }
  for (const auto& entry : state["files"]) {
    const auto recorded = entry.value("sha256", "");
    const auto actual = file_sha256(tree_root / entry.value("path", ""));
    if (recorded.empty() ? actual.has_value() : actual != recorded) {
      return false;
    }
  }
  return true;
}

void PatchRecord::save(const std::vector<PatchText>& wanted, BuildMode mode,
                       const fs::path& tree_root) const {
  std::error_code ec;
  fs::remove_all(state_dir_ / "applied", ec);
  fs::create_directories(state_dir_ / "applied");
  nlohmann::json state = {{"format", state_format}, {"mode", std::string(to_string(mode))}};
  state["patches"] = nlohmann::json::array();
  state["files"] = nlohmann::json::array();
  std::set<std::string> seen;
  for (const auto& patch : wanted) {
    write_whole_file(state_dir_ / "applied" / patch.name, patch.text);
    nlohmann::json entry = {{"name", patch.name}, {"sha256", patch.sha256}};
    if (!patch.checkout.empty()) {
      entry["checkout"] = patch.checkout;
    }
    if (patch.crlf_to_lf) {
      entry["crlf_to_lf"] = true;
    }
    state["patches"].push_back(std::move(entry));
    for (const auto& file : patch.files) {
      if (seen.insert(file).second) {
        state["files"].push_back(
            {{"path", file}, {"sha256", file_sha256(tree_root / file).value_or("")}});
      }
    }
  }
  const fs::path target = state_dir_ / "state.json";
  write_whole_file(target.string() + ".tmp", state.dump(2) + "\n");
  fs::rename(target.string() + ".tmp", target);
}

}  // namespace ascend_setup
