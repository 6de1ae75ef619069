// What the Ascend layer reads from a git checkout (HEAD's abbreviated id for
// the version's +git part, the branch for the branch mode rule), recorded in
// an sdist made of a checkout: the sdist has no .git, and the wheel built
// from it must be the checkout's wheel.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ascend_setup {

// The record's file name at the root of an sdist's tree.
inline constexpr const char* checkout_record_name = ".ascend-setup-checkout";

struct CheckoutFacts {
  std::optional<std::string> head_short_id;  // nullopt: HEAD had no commit
  std::optional<std::string> branch;         // nullopt: detached HEAD
};

// The facts of the checkout at `tree_root` (nullopt when it is none), HEAD
// abbreviated to at least `hash_length` digits.
std::optional<CheckoutFacts> read_checkout(const std::filesystem::path& tree_root, int hash_length);

// The facts recorded at `tree_root` (nullopt when there is no record). Throws
// Error when the record is unreadable or malformed.
std::optional<CheckoutFacts> read_checkout_record(const std::filesystem::path& tree_root);

// The checkout's own facts when `tree_root` is a checkout, else the recorded
// ones when it holds a record (an unpacked sdist), else nullopt.
std::optional<CheckoutFacts> checkout_facts(const std::filesystem::path& tree_root,
                                            int hash_length);

// Writes `facts` as the record into `dir` (an sdist's release tree).
void write_checkout_record(const std::filesystem::path& dir, const CheckoutFacts& facts);

}  // namespace ascend_setup
