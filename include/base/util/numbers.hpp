// Whole numbers read from outside text (the environment, a file, a server's
// answer, a tool's output): the one parser every unit uses, on
// std::from_chars, so it never throws and never reads past the text.
//
// The rule for errors: a number the user sets (an environment variable, a
// command-line value) that is not a whole number in its range is a usage
// error (exit 2), thrown by parse_setting() with one message shape,
// "NAME=VALUE is not a whole number from LOW to HIGH". A number inside a
// file or an answer is read with parse_integer(), and the parser of that
// format decides what a bad one means (its own bad_input Error, or "absent").
#pragma once

#include "base/util/error.hpp"

#include <charconv>
#include <concepts>
#include <optional>
#include <string>
#include <string_view>

namespace ascend_setup {

// `text` as a decimal whole number from `low` to `high`: ASCII digits only,
// the whole text consumed (no blanks, no '+', no "0x"), a leading '-' only
// when `low` is negative; nullopt for anything else, an overflow included.
template <std::integral T>
std::optional<T> parse_integer(std::string_view text, T low, T high) {
  if (text.empty() || text.front() == '+' || (text.front() == '-' && low >= 0)) {
    return std::nullopt;
  }
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    return std::nullopt;
  }
  return value;
}

// The leading run of ASCII digits of `text` ("407 Proxy..." -> "407"; empty
// when it does not start with one).
std::string_view leading_digits(std::string_view text);

// A user's setting `name`=`text` as a whole number from `low` to `high`;
// throws Error (usage) "NAME=TEXT is not a whole number from LOW to HIGH".
template <std::integral T>
T parse_setting(std::string_view name, std::string_view text, T low, T high) {
  if (const auto value = parse_integer<T>(text, low, high)) {
    return *value;
  }
  throw Error(std::string(name) + "=" + std::string(text) + " is not a whole number from " +
                  std::to_string(low) + " to " + std::to_string(high),
              ErrorKind::usage);
}

}  // namespace ascend_setup
