#include "advisor/python_lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace schedmate::advisor {
namespace {

using Comments = std::vector<std::pair<std::string, int>>;

std::vector<PyLogicalLine> Lex(std::string_view src, Comments* comments = nullptr) {
  Comments scratch;
  return LexPython(src, comments ? *comments : scratch);
}

// The token texts of a logical line.
std::vector<std::string> Texts(const PyLogicalLine& l) {
  std::vector<std::string> out;
  for (const PyToken& t : l.tokens) out.push_back(t.text);
  return out;
}

TEST(PythonLexerTest, BracketsAndContinuationsJoinLogicalLines) {
  auto lines = Lex("x = f(1,\n      2)\nif x:\n    y = 3 \\\n      + 4\n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(Texts(lines[0]), (std::vector<std::string>{"x", "=", "f", "(", "1", ",", "2", ")"}));
  EXPECT_EQ(lines[0].line, 1);
  EXPECT_EQ(lines[0].indent, 0);
  EXPECT_EQ(lines[0].tokens[6].line, 2);  // "2" inside the brackets, on the next line
  EXPECT_EQ(lines[0].tokens[6].col, 6);
  EXPECT_EQ(Texts(lines[1]), (std::vector<std::string>{"if", "x", ":"}));
  EXPECT_EQ(lines[1].line, 3);
  EXPECT_EQ(Texts(lines[2]), (std::vector<std::string>{"y", "=", "3", "+", "4"}));
  EXPECT_EQ(lines[2].line, 4);
  EXPECT_EQ(lines[2].indent, 4);
  EXPECT_EQ(lines[2].tokens[3].line, 5);  // "+" after the backslash continuation
  EXPECT_EQ(lines[2].tokens[3].col, 6);
}

TEST(PythonLexerTest, StringPrefixesQuotesAndEscapes) {
  const std::string src =
      "a = rb'\\d' + f\"{x}\\n\" + u'\\t\\q' + bar'y'\n"
      "b = '''one\ntwo''' + 'ab\\\ncd'\n"
      "c = 'open\n"
      "d = \"\"\"never closed";
  auto lines = Lex(src);
  ASSERT_EQ(lines.size(), 4u);
  const auto& a = lines[0].tokens;
  ASSERT_EQ(a.size(), 10u);
  EXPECT_EQ(a[2].kind, PyTokenKind::kString);
  EXPECT_EQ(a[2].text, "\\d");  // raw: kept as written
  EXPECT_EQ(a[2].begin, src.find("rb'"));
  EXPECT_EQ(a[2].end, src.find("rb'") + 6);
  EXPECT_FALSE(a[2].fstring);
  EXPECT_EQ(a[4].text, "{x}\n");
  EXPECT_TRUE(a[4].fstring);
  EXPECT_EQ(a[6].text, "\t\\q");             // an unknown escape keeps its backslash
  EXPECT_EQ(a[8].kind, PyTokenKind::kName);  // "bar" is not a prefix
  EXPECT_EQ(a[8].text, "bar");
  EXPECT_EQ(a[9].kind, PyTokenKind::kString);
  EXPECT_EQ(a[9].text, "y");

  const auto& b = lines[1].tokens;
  ASSERT_EQ(b.size(), 5u);
  EXPECT_EQ(b[2].text, "one\ntwo");
  EXPECT_EQ(b[2].line, 2);       // a string's line is its opening line
  EXPECT_EQ(b[4].text, "abcd");  // backslash-newline inside a string joins
  EXPECT_EQ(b[4].line, 3);

  EXPECT_EQ(lines[2].line, 5);  // the lines inside the strings above were counted
  ASSERT_EQ(lines[2].tokens.size(), 3u);
  EXPECT_EQ(lines[2].tokens[2].text, "open");  // unterminated: ends at the line's end
  EXPECT_EQ(lines[2].tokens[2].end, src.find("open") + 4);

  ASSERT_EQ(lines[3].tokens.size(), 3u);
  EXPECT_EQ(lines[3].tokens[2].text, "never closed");
  EXPECT_EQ(lines[3].tokens[2].end, src.size());
}

TEST(PythonLexerTest, NumbersAndLongestOperators) {
  auto lines = Lex("n = 0x1F + 1_000 + 1e-3 + .5 + 2j + 7e\nx //= 2 ** 3 -> ... != a.b\n");
  ASSERT_EQ(lines.size(), 2u);
  std::vector<std::string> numbers;
  for (const PyToken& t : lines[0].tokens) {
    if (t.kind == PyTokenKind::kNumber) numbers.push_back(t.text);
  }
  EXPECT_EQ(numbers, (std::vector<std::string>{"0x1F", "1_000", "1e-3", ".5", "2j", "7"}));
  EXPECT_EQ(lines[0].tokens.back().kind, PyTokenKind::kName);  // "e" without digits
  EXPECT_EQ(lines[0].tokens.back().text, "e");

  EXPECT_EQ(Texts(lines[1]), (std::vector<std::string>{"x", "//=", "2", "**", "3", "->", "...",
                                                       "!=", "a", ".", "b"}));
  for (const PyToken& t : lines[1].tokens) {
    EXPECT_EQ(t.end - t.begin, t.text.size()) << t.text;
  }
  EXPECT_EQ(lines[1].tokens[1].kind, PyTokenKind::kOp);
}

TEST(PythonLexerTest, CommentsAreReturnedApartWithTheirLines) {
  Comments comments;
  auto lines =
      Lex("# top\nx = 1  # note\n\n  # indented\nd = {\n  'a': '#no',  # one\n}\n", &comments);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(Texts(lines[0]), (std::vector<std::string>{"x", "=", "1"}));
  EXPECT_EQ(Texts(lines[1]),  // the dict, across its lines
            (std::vector<std::string>{"d", "=", "{", "a", ":", "#no", ",", "}"}));
  EXPECT_EQ(comments, (Comments{{"top", 1}, {"note", 2}, {"indented", 4}, {"one", 6}}));
}

TEST(PythonLexerTest, NonAsciiNamesAndByteColumns) {
  auto lines = Lex("\xC3\xA9t\xC3\xA9 = 1\n");  // "été = 1"
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(lines[0].tokens.size(), 3u);
  EXPECT_EQ(lines[0].tokens[0].kind, PyTokenKind::kName);
  EXPECT_EQ(lines[0].tokens[0].text, "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(lines[0].tokens[1].col, 6);
}

TEST(PythonLexerTest, EmptyAndBlankSourceHaveNoLines) {
  EXPECT_TRUE(Lex("").empty());
  EXPECT_TRUE(Lex("\n  \n\t\n").empty());
}

}  // namespace
}  // namespace schedmate::advisor
