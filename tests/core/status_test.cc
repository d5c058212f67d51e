#include "core/status.h"

#include "core/result.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  SM_ASSIGN_OR_RETURN(int h, Half(x));
  SM_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, OkIsCheapAndPrintsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, NamedConstructorsCarryCodeAndMessage) {
  Status s = Status::DataLoss("trace.csv:3: truncated row");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.ToString(), "DATA_LOSS: trace.csv:3: truncated row");
  EXPECT_EQ(s.WithContext("loading").message(), "loading: trace.csv:3: truncated row");
}

TEST(StatusTest, RetryableOnlyForTransientCodes) {
  EXPECT_TRUE(Status::Unavailable("x").IsRetryable());
  EXPECT_TRUE(Status::DeadlineExceeded("x").IsRetryable());
  EXPECT_FALSE(Status::InvalidArgument("x").IsRetryable());
  EXPECT_FALSE(Status::Internal("x").IsRetryable());
}

TEST(ResultTest, PropagatesThroughMacros) {
  auto ok = Quarter(8);
  ASSERT_OK(ok);
  EXPECT_EQ(*ok, 2);
  auto bad = Quarter(6);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "odd: 3");
  EXPECT_EQ(bad.value_or(-1), -1);
}

TEST(ResultDeathTest, ValueOnErrorAborts) {
  Result<int> r = Status::NotFound("x");
  EXPECT_DEATH({ (void)r.value(); }, "value\\(\\) on error Result");
}

}  // namespace
}  // namespace schedmate

#include <sys/stat.h>

#include "core/file_util.h"

namespace schedmate {
namespace {

TEST(FileUtilTest, WritesAtomicallyAndReadsBack) {
  testing::TempDir tmp;
  ASSERT_OK(WriteStringToFile(tmp.File("a.txt"), "hello"));
  auto text = ReadFileToString(tmp.File("a.txt"));
  ASSERT_OK(text);
  EXPECT_EQ(*text, "hello");
  EXPECT_EQ(ReadFileToString(tmp.File("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadFileToString(tmp.path()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadFileToString(tmp.File("a.txt"), 3).status().code(), StatusCode::kResourceExhausted);
}

TEST(FileUtilTest, WritesIntoAFifoInsteadOfReplacingIt) {
  testing::TempDir tmp;
  std::string fifo = tmp.File("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // A reader on the other end so the open for writing does not block.
  std::string cmd =
      "cat " + testing::ShellQuote(fifo) + " > " + testing::ShellQuote(tmp.File("got")) + " &";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_OK(WriteStringToFile(fifo, "through the pipe"));
  struct stat st {};
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));  // still a FIFO, not a regular file
}

}  // namespace
}  // namespace schedmate
