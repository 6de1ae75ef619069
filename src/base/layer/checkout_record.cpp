#include "base/layer/checkout_record.hpp"

#include "base/git/source_repo.hpp"
#include "base/util/error.hpp"
#include "base/util/whole_file.hpp"

#include <sstream>

namespace ascend_setup {

namespace {

// One "key value" line per fact; a missing key is a missing fact.
constexpr const char* header =
    "# ascend-setup: what the Ascend layer read from the git checkout this sdist was made of\n";

}  // namespace

std::optional<CheckoutFacts> read_checkout(const std::filesystem::path& tree_root,
                                           int hash_length) {
  const auto repo = SourceRepo::open(tree_root);
  if (!repo) {
    return std::nullopt;
  }
  return CheckoutFacts{repo->head_short_id(hash_length), repo->branch()};
}

std::optional<CheckoutFacts> read_checkout_record(const std::filesystem::path& tree_root) {
  const std::filesystem::path path = tree_root / checkout_record_name;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return std::nullopt;
  }
  const auto text = read_whole_file(path);
  if (!text) {
    throw Error("cannot read " + path.string(), ErrorKind::local_io);
  }
  CheckoutFacts facts;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (value.empty() || (key != "head" && key != "branch")) {
      throw Error(path.string() + ": unexpected line '" + line +
                      "' (expected `head <id>` and `branch <name>`)",
                  ErrorKind::bad_input);
    }
    (key == "head" ? facts.head_short_id : facts.branch) = value;
  }
  return facts;
}

std::optional<CheckoutFacts> checkout_facts(const std::filesystem::path& tree_root,
                                            int hash_length) {
  if (auto facts = read_checkout(tree_root, hash_length)) {
    return facts;
  }
  return read_checkout_record(tree_root);
}

void write_checkout_record(const std::filesystem::path& dir, const CheckoutFacts& facts) {
  std::string text = header;
  if (facts.head_short_id) {
    text += "head " + *facts.head_short_id + "\n";
  }
  if (facts.branch) {
    text += "branch " + *facts.branch + "\n";
  }
  write_whole_file(dir / checkout_record_name, text);
}

}  // namespace ascend_setup
