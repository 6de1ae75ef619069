// One TOML table of a profile, read key by key: every accessor validates its
// key's type (and an integer's one range) and remembers the key, so finish()
// reports a key nobody read (a typo) instead of ignoring it. Every failure
// throws Error naming the source, the line and the qualified key.
#pragma once

#include "base/layer/environment.hpp"

#include <toml++/toml.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ascend_setup {

class TableReader {
 public:
  TableReader(const toml::table& table, std::string path, const std::string& source)
      : table_(table), path_(std::move(path)), source_(source) {}

  std::string string(const std::string& key);
  // The same, `fallback` when absent.
  std::string optional_string(const std::string& key, const std::string& fallback = {});
  // A string that must be one of `choices`.
  std::string choice(const std::string& key, const std::vector<std::string>& choices);
  bool boolean(const std::string& key, bool fallback);
  // An integer within [minimum, maximum], the key's one limit.
  int integer(const std::string& key, int minimum, int maximum);
  // The same, `fallback` when absent.
  int optional_integer(const std::string& key, int minimum, int maximum, int fallback);
  std::vector<std::string> strings(const std::string& key);
  // Absent: empty.
  std::vector<std::string> optional_strings(const std::string& key);
  // An array of [name, value] string pairs.
  EnvList pairs(const std::string& key);
  // Absent: empty.
  EnvList optional_pairs(const std::string& key);
  // A table whose every value is an array of strings.
  std::map<std::string, std::vector<std::string>> string_lists(const std::string& key);
  // A table whose every value is a string, each checked by `valid` (else a
  // failure at its line: "expected `what`"); absent: empty.
  std::map<std::string, std::string> optional_strings_by_key(const std::string& key,
                                                             bool (*valid)(std::string_view),
                                                             const std::string& what);
  TableReader table(const std::string& key);
  // Absent: nullopt.
  std::optional<TableReader> optional_table(const std::string& key);
  // An array of inline tables; absent: empty.
  std::vector<TableReader> optional_table_array(const std::string& key);
  // Every key of this table, each an array of inline tables.
  std::vector<std::pair<std::string, std::vector<TableReader>>> array_tables();

  // Fails at `key`'s line (the table's when it is absent).
  [[noreturn]] void fail_key(const std::string& key, const std::string& what) const;
  // Throws on a key of the table that no accessor read.
  void finish() const;

 private:
  const toml::node* find(const std::string& key);
  const toml::node& require(const std::string& key);
  std::vector<std::string> string_array(const toml::node& node, const std::string& key);
  std::vector<TableReader> table_array(const toml::node& node, const std::string& key);
  [[noreturn]] void fail(const toml::node& node, const std::string& key,
                         const std::string& what) const;
  std::string qualified(const std::string& key) const;

  const toml::table& table_;
  std::string path_;
  const std::string& source_;
  std::set<std::string> used_;
};

}  // namespace ascend_setup
