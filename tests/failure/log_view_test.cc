#include "failure/log_view.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

int RunShellExitCode(const std::string& command) { return testing::RunShell(command).exit_code; }

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

// Defect 2: another process truncating the mapped log (logrotate copytruncate) made every read
// past the new end SIGBUS (exit 135). Now those reads see zeros and CheckIntact says so.
TEST(LogViewTest, TruncatedWhileReadIsReportedNotACrash) {
  testing::TempDir dir;
  const std::string path = dir.File("train.log");
  std::string text;
  for (int i = 0; text.size() < (8u << 20); ++i) {
    text += "[rank0]: step " + std::to_string(i) + " | loss 2.0412 | lr 3.0e-4\n";
  }
  text += "RuntimeError: CUDA error: uncorrectable ECC error encountered\n";
  ASSERT_OK(WriteStringToFile(path, text));
  auto v = LogView::OpenFile(path);
  ASSERT_OK(v);
  EXPECT_OK(v->CheckIntact());
  ASSERT_EQ(RunShellExitCode("truncate -s 4096 " + testing::ShellQuote(path)), 0);
  // Reads across the cut: the tail, the line count over the whole view.
  const std::string_view last = v->LineAt(v->size() - 1);
  EXPECT_EQ(last.find("ECC"), std::string_view::npos);  // the cut-off bytes are gone (zeros)
  EXPECT_GT(v->LineNumber(v->size()), 1);
  const Status st = v->CheckIntact();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.message().find(path), std::string::npos);
}

// ReadStable throws away what was read from a log rewritten meanwhile and reads it again.
TEST(LogViewTest, ReadStableRereadsAfterARewrite) {
  testing::TempDir dir;
  const std::string path = dir.File("job.log");
  ASSERT_OK(WriteStringToFile(path, "first run\nstep 1\n"));
  int calls = 0;
  auto r = LogView::ReadStable<std::string>(path, [&](const LogView& log) -> Result<std::string> {
    ++calls;
    std::string first(log.LineAt(0));
    if (calls == 1) {  // rotated in place while we read: truncated and rewritten
      EXPECT_EQ(::truncate(path.c_str(), 0), 0);
      std::ofstream(path, std::ios::app) << "second run, longer\nstep 1\nstep 2\n";
    }
    return first;
  });
  ASSERT_OK(r);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(*r, "second run, longer");
  // A log that keeps changing gives up with kDataLoss after the attempts.
  int tries = 0;
  auto never = LogView::ReadStable<int>(
      path,
      [&](const LogView&) -> Result<int> {
        ++tries;
        std::ofstream(path, std::ios::trunc) << "run " << tries << " of a log that never settles\n";
        return tries;
      },
      3);
  EXPECT_EQ(never.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(tries, 3);
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
