#include "core/strings.h"

#include <gtest/gtest.h>

#include <cmath>

namespace schedmate {
namespace {

TEST(StringsTest, ParsesWholeNumbersOnly) {
  EXPECT_EQ(ParseInt(" 42 "), 42);
  EXPECT_EQ(ParseInt("+7"), 7);
  EXPECT_EQ(ParseInt("-3"), -3);
  EXPECT_FALSE(ParseInt("4x").has_value());
  EXPECT_FALSE(ParseInt("").has_value());
  EXPECT_FALSE(ParseInt("1.5").has_value());
  EXPECT_DOUBLE_EQ(*ParseDouble("1.5e3"), 1500.0);
  EXPECT_TRUE(std::isnan(*ParseDouble("nan")));
  EXPECT_FALSE(ParseDouble("1.5.2").has_value());
}

TEST(StringsTest, SplitKeepsEmptyFields) {
  auto f = Split("a,,b,", ',');
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0], "a");
  EXPECT_EQ(f[1], "");
  EXPECT_EQ(f[3], "");
}

TEST(StringsTest, Utf8PrefixNeverSplitsACharacter) {
  const std::string s =
      "ab\xE7\x81\xB5"
      "c";  // a, b, U+7075 (3 bytes), c
  EXPECT_EQ(Utf8Prefix(s, 10), s);
  EXPECT_EQ(Utf8Prefix(s, 2), "ab");
  EXPECT_EQ(Utf8Prefix(s, 3), "ab");
  EXPECT_EQ(Utf8Prefix(s, 4), "ab");
  EXPECT_EQ(Utf8Prefix(s, 5), "ab\xE7\x81\xB5");
  EXPECT_EQ(Utf8Prefix(s, 0), "");
  // Stray continuation bytes are not UTF-8: cut where asked.
  const std::string junk = "a\x80\x80\x80\x80\x80";
  EXPECT_EQ(Utf8Prefix(junk, 5), junk.substr(0, 5));
}

TEST(StringsTest, CaseHelpers) {
  EXPECT_EQ(ToLower("CUDA Error"), "cuda error");
  EXPECT_TRUE(IContains("RuntimeError: CUDA out of memory", "cuda OUT"));
  EXPECT_FALSE(IContains("abc", "abd"));
  EXPECT_TRUE(StartsWith("#SBATCH --gres", "#SBATCH"));
  EXPECT_TRUE(EndsWith("plot.svg", ".svg"));
  EXPECT_EQ(Trim("  x y \t"), "x y");
}

}  // namespace
}  // namespace schedmate
