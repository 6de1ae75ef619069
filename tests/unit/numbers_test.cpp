// The one integer parser, the one trim: what they accept and refuse.
#include "base/util/numbers.hpp"
#include "base/util/strings.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

using namespace ascend_setup;

TEST(Numbers, DigitsInRangeAreTheNumber) {
  EXPECT_EQ(parse_integer("0", 0, 10), 0);
  EXPECT_EQ(parse_integer("10", 0, 10), 10);
  EXPECT_EQ(parse_integer("007", 0, 10), 7);
  EXPECT_EQ(parse_integer("-5", -10, 10), -5);
  EXPECT_EQ(parse_integer<std::uint64_t>("18446744073709551615", 0,
                                         std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max());
}

TEST(Numbers, AnythingElseIsNoNumberNeverAnException) {
  for (const char* bad :
       {"", " 1", "1 ", "+1", "1x", "x1", "0x10", "1.0", "1e3", "--1", "-", "\n1", "1\n", "11"}) {
    EXPECT_EQ(parse_integer(bad, 0, 10), std::nullopt) << '"' << bad << '"';
  }
  EXPECT_EQ(parse_integer("-1", 0, 10), std::nullopt);  // no sign where low >= 0
  EXPECT_EQ(parse_integer("-11", -10, 10), std::nullopt);
  // Overflow of the type: std::stoi threw std::out_of_range, strtoull saturated.
  EXPECT_EQ(parse_integer("99999999999999999999", 0, std::numeric_limits<int>::max()),
            std::nullopt);
  EXPECT_EQ(parse_integer<std::uint64_t>("18446744073709551616", 0,
                                         std::numeric_limits<std::uint64_t>::max()),
            std::nullopt);
}

TEST(Numbers, ASettingOutOfRangeIsAUsageErrorNamingIt) {
  EXPECT_EQ(parse_setting("MAX_JOBS", "12", 1, 60000), 12);
  for (const char* bad : {"abc", "0", "60001", "99999999999999999999", " 3"}) {
    try {
      parse_setting("MAX_JOBS", bad, 1, 60000);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::usage);
      EXPECT_EQ(std::string(error.what()),
                "MAX_JOBS=" + std::string(bad) + " is not a whole number from 1 to 60000");
    }
  }
}

TEST(Numbers, LeadingDigitsStopAtTheFirstOtherCharacter) {
  EXPECT_EQ(leading_digits("407 Proxy Authentication Required"), "407");
  EXPECT_EQ(leading_digits("x407"), "");
  EXPECT_EQ(leading_digits(""), "");
  EXPECT_EQ(leading_digits("2024"), "2024");
}

TEST(Strings, TrimRemovesTheBlanksAtBothEndsOnly) {
  EXPECT_EQ(trim("  a b \r\n"), "a b");
  EXPECT_EQ(trim("\t\n"), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" x ", " "), "x");
  EXPECT_EQ(trim("\tx\t", " "), "\tx\t");
}
