#include "trace/csv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace schedmate::trace {
namespace {

std::vector<std::vector<std::string>> SplitAll(std::string_view data, char sep = ',') {
  CsvCursor c(data, sep);
  std::vector<std::string_view> f;
  std::vector<std::vector<std::string>> out;
  while (c.Next(f)) out.emplace_back(f.begin(), f.end());
  return out;
}

TEST(CsvCursorTest, SplitsPlainRowsWithLfAndCrlf) {
  auto rows = SplitAll("a,b,c\n1,2,3\r\n4,,6");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"4", "", "6"}));
}

TEST(CsvCursorTest, QuotedFieldsWithSeparatorsEscapesAndNewlines) {
  CsvCursor c("x,\"a,b\",\"say \"\"hi\"\"\"\n\"two\nlines\",z\nlast,1\n", ',');
  std::vector<std::string_view> f;
  ASSERT_TRUE(c.Next(f));
  EXPECT_EQ(c.line(), 1);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[1], "a,b");
  EXPECT_EQ(f[2], "say \"hi\"");
  ASSERT_TRUE(c.Next(f));
  EXPECT_EQ(c.line(), 2);
  EXPECT_EQ(f[0], "two\nlines");
  EXPECT_EQ(f[1], "z");
  ASSERT_TRUE(c.Next(f));
  EXPECT_EQ(c.line(), 4);  // the quoted line break counted
  EXPECT_EQ(f[0], "last");
  EXPECT_FALSE(c.Next(f));
}

TEST(CsvCursorTest, EscapedFieldsStayValidForTheWholeRecord) {
  CsvCursor c("\"a\"\"1\",\"b\"\"2\",\"c\"\"3\"\n", ',');
  std::vector<std::string_view> f;
  ASSERT_TRUE(c.Next(f));
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0], "a\"1");
  EXPECT_EQ(f[1], "b\"2");
  EXPECT_EQ(f[2], "c\"3");
}

TEST(CsvCursorTest, ReportsUnterminatedQuote) {
  CsvCursor c("a,\"open\nmore", ',');
  std::vector<std::string_view> f;
  ASSERT_TRUE(c.Next(f));
  EXPECT_EQ(c.error(), "unterminated quoted field");
  EXPECT_FALSE(c.Next(f));
}

TEST(CsvCursorTest, SkipsByteOrderMarkAndHandlesTabs) {
  auto rows = SplitAll("\xEF\xBB\xBFh1\th2\nv1\tv2\n", '\t');
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0], "h1");
  EXPECT_EQ(rows[1][1], "v2");
}

TEST(CsvCursorTest, BlankLineIsOneEmptyField) {
  CsvCursor c("a\n\n  \nb\n", ',');
  std::vector<std::string_view> f;
  int blanks = 0, rows = 0;
  while (c.Next(f)) {
    ++rows;
    if (CsvCursor::IsBlank(f)) ++blanks;
  }
  EXPECT_EQ(rows, 4);
  EXPECT_EQ(blanks, 2);
}

}  // namespace
}  // namespace schedmate::trace
