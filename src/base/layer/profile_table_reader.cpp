#include "base/layer/profile_table_reader.hpp"

#include "base/util/error.hpp"

namespace ascend_setup {

std::string TableReader::string(const std::string& key) {
  const toml::node& node = require(key);
  if (const auto* value = node.as_string()) {
    return value->get();
  }
  fail(node, key, "expected a string");
}

std::string TableReader::optional_string(const std::string& key, const std::string& fallback) {
  const toml::node* node = find(key);
  if (node == nullptr) {
    return fallback;
  }
  if (const auto* value = node->as_string()) {
    return value->get();
  }
  fail(*node, key, "expected a string");
}

std::string TableReader::choice(const std::string& key, const std::vector<std::string>& choices) {
  const toml::node& node = require(key);
  const auto* value = node.as_string();
  for (const std::string& allowed : choices) {
    if (value != nullptr && value->get() == allowed) {
      return allowed;
    }
  }
  std::string expected;
  for (const std::string& allowed : choices) {
    expected += (expected.empty() ? "\"" : " or \"") + allowed + "\"";
  }
  fail(node, key, "expected " + expected);
}

bool TableReader::boolean(const std::string& key, bool fallback) {
  const toml::node* node = find(key);
  if (node == nullptr) {
    return fallback;
  }
  if (const auto* value = node->as_boolean()) {
    return value->get();
  }
  fail(*node, key, "expected true or false");
}

int TableReader::integer(const std::string& key, int minimum, int maximum) {
  const toml::node& node = require(key);
  const auto* value = node.as_integer();
  if (value == nullptr || value->get() < minimum || value->get() > maximum) {
    fail(node, key,
         "expected an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum));
  }
  return static_cast<int>(value->get());
}

int TableReader::optional_integer(const std::string& key, int minimum, int maximum, int fallback) {
  return table_.get(key) == nullptr ? (used_.insert(key), fallback)
                                    : integer(key, minimum, maximum);
}

std::vector<std::string> TableReader::strings(const std::string& key) {
  return string_array(require(key), key);
}

std::vector<std::string> TableReader::optional_strings(const std::string& key) {
  const toml::node* node = find(key);
  return node == nullptr ? std::vector<std::string>() : string_array(*node, key);
}

EnvList TableReader::pairs(const std::string& key) {
  const toml::node& node = require(key);
  const auto* array = node.as_array();
  if (array == nullptr) {
    fail(node, key, "expected an array of [name, value] pairs");
  }
  EnvList result;
  for (const toml::node& item : *array) {
    std::vector<std::string> pair = string_array(item, key);
    if (pair.size() != 2) {
      fail(item, key, "expected a [name, value] pair of two strings");
    }
    result.emplace_back(pair[0], pair[1]);
  }
  return result;
}

EnvList TableReader::optional_pairs(const std::string& key) {
  return table_.get(key) == nullptr ? (used_.insert(key), EnvList()) : pairs(key);
}

std::map<std::string, std::vector<std::string>> TableReader::string_lists(const std::string& key) {
  TableReader inner = table(key);
  std::map<std::string, std::vector<std::string>> result;
  for (const auto& [name, node] : inner.table_) {
    const std::string name_text(name.str());
    result[name_text] = inner.strings(name_text);
  }
  inner.finish();
  return result;
}

std::map<std::string, std::string> TableReader::optional_strings_by_key(
    const std::string& key, bool (*valid)(std::string_view), const std::string& what) {
  std::map<std::string, std::string> result;
  std::optional<TableReader> inner = optional_table(key);
  if (!inner) {
    return result;
  }
  for (const auto& [name, node] : inner->table_) {
    const std::string name_text(name.str());
    const std::string value = inner->string(name_text);
    if (!valid(value)) {
      inner->fail_key(name_text, "expected " + what);
    }
    result[name_text] = value;
  }
  inner->finish();
  return result;
}

TableReader TableReader::table(const std::string& key) {
  const toml::node& node = require(key);
  if (const auto* value = node.as_table()) {
    return TableReader(*value, qualified(key), source_);
  }
  fail(node, key, "expected a table");
}

std::optional<TableReader> TableReader::optional_table(const std::string& key) {
  if (table_.get(key) == nullptr) {
    used_.insert(key);
    return std::nullopt;
  }
  return table(key);
}

std::vector<TableReader> TableReader::optional_table_array(const std::string& key) {
  const toml::node* node = find(key);
  return node == nullptr ? std::vector<TableReader>() : table_array(*node, key);
}

std::vector<std::pair<std::string, std::vector<TableReader>>> TableReader::array_tables() {
  std::vector<std::pair<std::string, std::vector<TableReader>>> result;
  for (const auto& [name, node] : table_) {
    const std::string name_text(name.str());
    used_.insert(name_text);
    result.emplace_back(name_text, table_array(node, name_text));
  }
  return result;
}

std::vector<TableReader> TableReader::table_array(const toml::node& node, const std::string& key) {
  const auto* array = node.as_array();
  if (array == nullptr) {
    fail(node, key, "expected an array of tables");
  }
  std::vector<TableReader> entries;
  for (const toml::node& item : *array) {
    const auto* inner = item.as_table();
    if (inner == nullptr) {
      fail(item, key, "expected an array of tables");
    }
    entries.emplace_back(*inner, qualified(key), source_);
  }
  return entries;
}

void TableReader::fail_key(const std::string& key, const std::string& what) const {
  const toml::node* node = table_.get(key);
  fail(node != nullptr ? *node : static_cast<const toml::node&>(table_), key, what);
}

void TableReader::finish() const {
  for (const auto& [name, node] : table_) {
    if (used_.count(std::string(name.str())) == 0) {
      fail(node, std::string(name.str()), "unknown key");
    }
  }
}

const toml::node* TableReader::find(const std::string& key) {
  used_.insert(key);
  return table_.get(key);
}

const toml::node& TableReader::require(const std::string& key) {
  const toml::node* node = find(key);
  if (node == nullptr) {
    throw Error(source_ + ":" + std::to_string(table_.source().begin.line) + ": missing key '" +
                    qualified(key) + "'",
                ErrorKind::bad_input);
  }
  return *node;
}

std::vector<std::string> TableReader::string_array(const toml::node& node, const std::string& key) {
  const auto* array = node.as_array();
  if (array == nullptr) {
    fail(node, key, "expected an array of strings");
  }
  std::vector<std::string> result;
  for (const toml::node& item : *array) {
    const auto* value = item.as_string();
    if (value == nullptr) {
      fail(item, key, "expected an array of strings");
    }
    result.push_back(value->get());
  }
  return result;
}

void TableReader::fail(const toml::node& node, const std::string& key,
                       const std::string& what) const {
  throw Error(source_ + ":" + std::to_string(node.source().begin.line) + ": key '" +
                  qualified(key) + "': " + what,
              ErrorKind::bad_input);
}

std::string TableReader::qualified(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

}  // namespace ascend_setup
