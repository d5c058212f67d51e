#include "failure/log_view.h"

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

TEST(LogViewTest, LineArithmetic) {
  LogView v = LogView::FromString("alpha\nbeta\r\n\ngamma");
  EXPECT_EQ(v.LineStart(0), 0u);
  EXPECT_EQ(v.LineStart(3), 0u);
  EXPECT_EQ(v.LineStart(6), 6u);
  EXPECT_EQ(v.LineStart(8), 6u);
  EXPECT_EQ(v.NextLineStart(1), 6u);
  EXPECT_EQ(v.NextLineStart(6), 6u);
  EXPECT_EQ(v.NextLineStart(13), 13u);
  EXPECT_EQ(v.NextLineStart(14), v.size());
  EXPECT_EQ(v.LineAt(7), "beta");  // '\r' stripped
  EXPECT_EQ(v.LineAt(12), "");
  EXPECT_EQ(v.LineAt(15), "gamma");
  EXPECT_EQ(v.LineNumber(0), 1);
  EXPECT_EQ(v.LineNumber(6), 2);
  EXPECT_EQ(v.LineNumber(12), 3);
  EXPECT_EQ(v.LineNumber(13), 4);
  EXPECT_EQ(v.LineEnd(13), v.size());
}

TEST(LogViewTest, MapsFilesAndReportsMissingOnes) {
  testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("a.log"), "one\ntwo\n"));
  auto v = LogView::OpenFile(dir.File("a.log"));
  ASSERT_OK(v);
  EXPECT_EQ(v->data(), "one\ntwo\n");
  LogView moved = std::move(*v);
  EXPECT_EQ(moved.LineAt(4), "two");

  auto missing = LogView::OpenFile(dir.File("nope.log"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto directory = LogView::OpenFile(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument);

  ASSERT_OK(WriteStringToFile(dir.File("empty.log"), ""));
  auto empty = LogView::OpenFile(dir.File("empty.log"));
  ASSERT_OK(empty);
  EXPECT_EQ(empty->size(), 0u);
}

TEST(LogViewTest, CountNewlines) {
  EXPECT_EQ(CountNewlines(""), 0);
  EXPECT_EQ(CountNewlines("a\nb\n\n"), 3);
  std::string big(100000, 'x');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = '\n';
  EXPECT_EQ(CountNewlines(big), static_cast<int64_t>((big.size() + 6) / 7));
}

}  // namespace
}  // namespace schedmate::failure
