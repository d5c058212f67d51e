#include "failure/first_error_locator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "builtin_signatures.h"
#include "failure/rule_line_judge.h"
#include "failure/signature_set.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

// Forwards to a target judge and counts the questions and bytes it is asked.
class CountingJudge : public LineJudge {
 public:
  explicit CountingJudge(LineJudge& target) : target_(target) {}
  std::string_view Name() const override { return target_.Name(); }
  Result<bool> ContainsFailure(const LogChunk& chunk) override {
    ++contains_calls;
    bytes += chunk.text.size();
    return target_.ContainsFailure(chunk);
  }
  Result<std::vector<LineRole>> ScoreLines(const LogChunk& chunk) override {
    ++score_calls;
    bytes += chunk.text.size();
    EXPECT_LE(chunk.text.size(), target_.MaxScoringBytes());
    return target_.ScoreLines(chunk);
  }
  size_t MaxScoringBytes() const override { return target_.MaxScoringBytes(); }
  int contains_calls = 0;
  int score_calls = 0;
  size_t bytes = 0;

 private:
  LineJudge& target_;
};

class UnavailableJudge : public LineJudge {
 public:
  std::string_view Name() const override { return "down"; }
  Result<bool> ContainsFailure(const LogChunk&) override {
    return Status::Unavailable("judge offline");
  }
  Result<std::vector<LineRole>> ScoreLines(const LogChunk&) override {
    return Status::Unavailable("judge offline");
  }
  size_t MaxScoringBytes() const override { return 1 << 16; }
};

// A line's role from its first letter: O origin, K weak, W wrapper, T trace, else none.
class LetterJudge : public LineJudge {
 public:
  static LineRole RoleOf(std::string_view line) {
    switch (line.empty() ? ' ' : line[0]) {
      case 'O':
        return LineRole::kOrigin;
      case 'K':
        return LineRole::kWeak;
      case 'W':
        return LineRole::kWrapper;
      case 'T':
        return LineRole::kTrace;
      default:
        return LineRole::kNone;
    }
  }
  std::string_view Name() const override { return "letters"; }
  Result<bool> ContainsFailure(const LogChunk& chunk) override {
    bool any = false;
    ForEachLine(chunk, [&](std::string_view line, size_t) { any |= IsFailureRole(RoleOf(line)); });
    return any;
  }
  Result<std::vector<LineRole>> ScoreLines(const LogChunk& chunk) override {
    std::vector<LineRole> roles;
    ForEachLine(chunk, [&](std::string_view line, size_t) { roles.push_back(RoleOf(line)); });
    return roles;
  }
  size_t MaxScoringBytes() const override { return 1 << 16; }
};

Location LocateText(const std::string& text, LocatorOptions options = {}) {
  RuleLineJudge judge(BuiltinSignatures());
  FirstErrorLocator locator(judge, options);
  auto loc = locator.Locate(LogView::FromString(text));
  SM_CHECK(loc.ok()) << loc.status().ToString();
  return std::move(loc).value();
}

TEST(FirstErrorLocatorTest, CascadePatternsPickTheOriginatingLine) {
  struct Case {
    const char* name;
    std::string log;
    int64_t want_line;
  };
  const Case cases[] = {
      {"chained exception: the first one",
       "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nOSError: [Errno 5] "
       "Input/output error\n\nDuring handling of the above exception, another exception "
       "occurred:\n\nRuntimeError: save failed\n",
       3},
      {"direct cause: the first one",
       "KeyError: 'label'\n\nThe above exception was the direct cause of the following "
       "exception:\n\nValueError: bad sample\n",
       1},
      {"dataloader re-raise with inner error",
       "TypeError: Caught TypeError in DataLoader worker process 0.\nOriginal Traceback (most "
       "recent call last):\n  File \"w.py\", line 3, in f\nTypeError: 'NoneType' object is not "
       "subscriptable\n",
       4},
      {"dataloader re-raise alone",
       "step 3\nKeyError: Caught KeyError in DataLoader worker process 2.\n", 2},
      {"one rank fails, the others time out",
       "[rank0]:[E ProcessGroupNCCL.cpp:1] [Rank 0] Watchdog caught collective operation "
       "timeout: WorkNCCL(SeqNum=77, OpType=ALLREDUCE)\n[rank1]: RuntimeError: CUDA error: an "
       "illegal memory access was encountered\n",
       2},
      {"watchdog cascade wrapper lines are skipped",
       "[E ProcessGroupNCCL.cpp:1] Some NCCL operations have failed or timed out.\n[E "
       "ProcessGroupNCCL.cpp:2] To avoid data inconsistency, we are taking the entire process "
       "down.\n[E ProcessGroupNCCL.cpp:3] [Rank 2] Watchdog caught collective operation timeout: "
       "WorkNCCL(SeqNum=5, OpType=ALLREDUCE)\n",
       3},
      {"torchrun summary after the error",
       "ZeroDivisionError: division by zero\nERROR:torch.distributed.elastic.multiprocessing.api:"
       "failed (exitcode: 1) local_rank: 0\ntorch.distributed.elastic.multiprocessing.errors."
       "ChildFailedError:\n",
       1},
      {"torchrun summary alone",
       "loading\nERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) "
       "local_rank: 0 (pid: 1)\n",
       2},
      {"slurm closing line after the error",
       "AssertionError: batch empty\nslurmstepd: error: *** JOB 1 ON n1 CANCELLED AT "
       "2024-01-01T00:00:00 DUE TO TIME LIMIT ***\n",
       1},
      {"generic ERROR header before the exception",
       "ERROR [train] Exception during training:\nTraceback (most recent call last):\n  File "
       "\"x.py\", line 2, in f\n    raise ValueError(\"NaN loss\")\nValueError: NaN loss\n",
       5},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Location loc = LocateText(c.log);
    ASSERT_TRUE(loc.root.has_value());
    EXPECT_EQ(loc.root->line.line_no, c.want_line) << loc.root->line.text;
  }
}

TEST(FirstErrorLocatorTest, NoFailureMeansNoRoot) {
  Location loc = LocateText("epoch 1\nepoch 2\nUserWarning: slow disk\n");
  EXPECT_FALSE(loc.root.has_value());
  EXPECT_GE(loc.judge_calls, 1);
  EXPECT_FALSE(LocateText("").root.has_value());
}

TEST(FirstErrorLocatorTest, ContextWindowIsClippedToTheLog) {
  std::string log;
  for (int i = 1; i <= 1000; ++i) {
    log += i == 600 ? "OSError: [Errno 28] No space left on device\n"
                    : "ok " + std::to_string(i) + "\n";
  }
  LocatorOptions options;
  options.context_lines = 11;
  Location loc = LocateText(log, options);
  ASSERT_TRUE(loc.root);
  EXPECT_EQ(loc.root->line.line_no, 600);
  EXPECT_EQ(loc.context_first_line, 595);
  EXPECT_EQ(loc.context_last_line, 605);
  options.context_lines = 5000;
  loc = LocateText(log, options);
  EXPECT_EQ(loc.context_first_line, 1);
  EXPECT_EQ(loc.context_last_line, 1000);
}

// A long healthy run, then a failure report of `report_lines` lines (an error every 40 lines,
// the originating error first).
std::string BigLog(int64_t healthy_lines, int64_t report_lines, int64_t* root_line) {
  std::string log;
  log.reserve(static_cast<size_t>((healthy_lines + report_lines) * 48));
  for (int64_t i = 0; i < healthy_lines; ++i) {
    log += "step " + std::to_string(i) + " loss 0." + std::to_string(1000 + i % 9000) +
           " lr 3e-4 tok/s 41234\n";
    if (i % 5000 == 17) log += "UserWarning: dataloader is slow\n";
  }
  *root_line = CountNewlines(log) + 1;
  log += "RuntimeError: CUDA error: uncorrectable ECC error encountered\n";
  for (int64_t i = 1; i < report_lines; ++i) {
    log += i % 40 == 0 ? "[E ProcessGroupNCCL.cpp:9] Watchdog caught collective operation timeout\n"
                       : "still waiting for peers " + std::to_string(i) + "\n";
  }
  return log;
}

TEST(FirstErrorLocatorTest, BisectionUsesLogarithmicallyManyCallsAndReadsTheTailOnly) {
  int64_t root = 0;
  std::string log = BigLog(400000, 20, &root);
  RuleLineJudge rules(BuiltinSignatures());
  CountingJudge judge(rules);
  FirstErrorLocator locator(judge);
  auto loc = locator.Locate(LogView::FromString(log));
  ASSERT_OK(loc);
  ASSERT_TRUE(loc->root);
  EXPECT_EQ(loc->root->line.line_no, root);
  EXPECT_EQ(loc->judge_calls, judge.contains_calls + judge.score_calls);
  EXPECT_EQ(judge.score_calls, 1);
  EXPECT_LE(loc->judge_calls, 6);
  EXPECT_LT(judge.bytes, log.size() / 20);  // the failure is at the end: read only the tail
}

TEST(FirstErrorLocatorTest, LongFailureReportsStillCostLogarithmicCalls) {
  // The report itself spans most of the log, so the locator must gallop far back and bisect.
  int last_calls = 0;
  for (int64_t scale : {1, 4, 16}) {
    SCOPED_TRACE(scale);
    int64_t root = 0;
    std::string log = BigLog(20000 * scale, 60000 * scale, &root);
    RuleLineJudge rules(BuiltinSignatures());
    CountingJudge judge(rules);
    FirstErrorLocator locator(judge);
    auto loc = locator.Locate(LogView::FromString(log));
    ASSERT_OK(loc);
    ASSERT_TRUE(loc->root);
    EXPECT_EQ(loc->root->line.line_no, root);
    double log2_chunks = std::log2(static_cast<double>(log.size()) / (64 << 10));
    EXPECT_LE(loc->judge_calls, static_cast<int>(3 * log2_chunks) + 4) << "bytes " << log.size();
    if (last_calls > 0) {
      EXPECT_LE(loc->judge_calls, last_calls + 7);  // x4 size: few more calls
    }
    last_calls = loc->judge_calls;
  }
}

TEST(FirstErrorLocatorTest, SingleHugeLineAndJudgeErrors) {
  std::string line(3 << 20, 'x');
  line += " OSError: [Errno 5] Input/output error";
  Location loc = LocateText("header\n" + line);
  ASSERT_TRUE(loc.root);
  EXPECT_EQ(loc.root->line.line_no, 2);

  UnavailableJudge down;
  FirstErrorLocator locator(down);
  auto r = locator.Locate(LogView::FromString("ValueError: x\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

TEST(FirstErrorLocatorTest, FollowersAreTheCascadeAfterTheRoot) {
  Location loc = LocateText(
      "RuntimeError: CUDA error: uncorrectable ECC error encountered\nsome output\n[E x.cpp:1] "
      "[Rank 1] NCCL watchdog thread terminated with exception: CUDA error\n");
  ASSERT_TRUE(loc.root);
  ASSERT_EQ(loc.followers.size(), 1u);
  EXPECT_EQ(loc.followers[0].line.line_no, 3);
  EXPECT_EQ(loc.followers[0].role, LineRole::kWrapper);
}

// The evidence around the root: its continuation after a trailing ':', the wrapper-or-stronger
// lines within the horizon before it (the nearest max_followers kept) and after it (the first
// max_followers), and the context window.
TEST(FirstErrorLocatorTest, EvidenceAroundTheRootFollowsTheOptions) {
  const std::string log =
      "x\nW a\nW b0\nW b\nK c\nT d\nO root:  \nx cont\nW f1\nK f2\nO f3\nW late\n";
  LetterJudge judge;
  LocatorOptions options;
  options.max_followers = 2;
  options.follower_horizon = 4;
  options.context_lines = 5;
  auto loc = FirstErrorLocator(judge, options).Locate(LogView::FromString(log));
  ASSERT_OK(loc);
  ASSERT_TRUE(loc->root);
  EXPECT_EQ(loc->root->line.line_no, 7);
  EXPECT_EQ(loc->root->role, LineRole::kOrigin);
  EXPECT_EQ(loc->root->offset, log.find("O root"));
  EXPECT_EQ(loc->root_continuation, "x cont");
  auto line_numbers = [](const std::vector<LocatedLine>& lines) {
    std::vector<int64_t> out;
    for (const LocatedLine& l : lines) out.push_back(l.line.line_no);
    return out;
  };
  EXPECT_EQ(line_numbers(loc->preceding), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(line_numbers(loc->followers), (std::vector<int64_t>{9, 10}));
  EXPECT_EQ(loc->followers[1].role, LineRole::kWeak);
  EXPECT_EQ(loc->followers[1].offset, log.find("K f2"));
  EXPECT_EQ(loc->context_first_line, 5);
  EXPECT_EQ(loc->context_last_line, 9);

  options.max_followers = 10;
  options.context_lines = 100;
  loc = FirstErrorLocator(judge, options).Locate(LogView::FromString(log));
  ASSERT_OK(loc);
  EXPECT_EQ(line_numbers(loc->preceding), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(line_numbers(loc->followers), (std::vector<int64_t>{9, 10, 11}));  // not 12: horizon
  EXPECT_EQ(loc->context_first_line, 1);
  EXPECT_EQ(loc->context_last_line, 12);
}

// Without an originating line the weak line wins over an earlier wrapper; a log of trace lines
// only has its first trace line as root.
TEST(FirstErrorLocatorTest, RootFallsBackFromOriginToWeakToWrapperToTrace) {
  LetterJudge judge;
  FirstErrorLocator locator(judge);
  auto weak = locator.Locate(LogView::FromString("x\nT t\nW w\nK k\nK k2\n"));
  ASSERT_OK(weak);
  ASSERT_TRUE(weak->root);
  EXPECT_EQ(weak->root->line.line_no, 4);
  EXPECT_EQ(weak->root->role, LineRole::kWeak);
  auto trace = locator.Locate(LogView::FromString("x\nT t1\nT t2\n"));
  ASSERT_OK(trace);
  ASSERT_TRUE(trace->root);
  EXPECT_EQ(trace->root->line.line_no, 2);
  EXPECT_EQ(trace->root->role, LineRole::kTrace);
  EXPECT_TRUE(trace->root_continuation.empty());
}

}  // namespace
}  // namespace schedmate::failure
