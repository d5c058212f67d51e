#include "failure/failure_handler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "builtin_signatures.h"
#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

// A plug-in classifier standing in for an LLM: answers from a script.
class ScriptedClassifier : public FailureClassifier {
 public:
  explicit ScriptedClassifier(Result<Classification> answer) : answer_(std::move(answer)) {}
  std::string_view Name() const override { return "scripted"; }
  Result<Classification> Classify(const FailureReport& report) const override {
    seen_root = report.root.line.line_no;
    return answer_;
  }
  mutable int64_t seen_root = 0;

 private:
  Result<Classification> answer_;
};

TEST(FailureHandlerTest, PluggedClassifierDecidesAndItsErrorsPropagate) {
  Classification c;
  c.label = FailureLabel::kInfrastructure;
  c.category = "storage";
  c.confidence = 0.7;
  ScriptedClassifier scripted(c);
  FailureHandler handler(BuiltinSignatures(), nullptr, {}, nullptr, &scripted);
  auto d = handler.Diagnose(LogView::FromString("ok\nValueError: odd value\n"));
  ASSERT_OK(d);
  EXPECT_EQ(scripted.seen_root, 2);
  EXPECT_EQ(d->label, FailureLabel::kInfrastructure);
  EXPECT_EQ(d->category, "storage");
  EXPECT_EQ(d->engine, "builtin+scripted");
  EXPECT_FALSE(d->hint.empty());  // category info still comes from the knowledge base

  ScriptedClassifier down(Status::Unavailable("llm offline"));
  FailureHandler failing(BuiltinSignatures(), nullptr, {}, nullptr, &down);
  auto e = failing.Diagnose(LogView::FromString("ValueError: odd value\n"));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kUnavailable);
}

TEST(FailureHandlerTest, NodesNamedNearTheFailure) {
  EXPECT_EQ(ExtractNodeNames({"gpu-a1:123:456 [3] NCCL WARN NET/IB : error",
                              "slurmstepd: error: *** JOB 5 ON gpu-a2 CANCELLED AT x ***",
                              "srun: error: gpu-a3: task 1: Killed", "host: gpu-a4",
                              "srun: error: Node failure on gpu-a5",
                              "Jun 1 10:00:00 gpu-a6 kernel: NVRM: Xid 79",
                              "connect to localhost failed", "node has died"}),
            (std::vector<std::string>{"gpu-a1", "gpu-a2", "gpu-a3", "gpu-a4", "gpu-a5", "gpu-a6"}));
}

TEST(FailureHandlerTest, LatestSavedCheckpointBeforeTheFailure) {
  std::string log =
      "saving checkpoint to /ckpt/a/step_100.pt\n"
      "step 150\n"
      "Saved model weights at ./out/checkpoint-200\n"
      "loading checkpoint /ckpt/old.pt\n"
      "failed to save checkpoint /ckpt/a/step_300.pt\n"
      "OSError: [Errno 28] No space left on device\n"
      "saving checkpoint to /ckpt/after.pt\n";
  LogView v = LogView::FromString(log);
  size_t root = log.find("OSError");
  EXPECT_EQ(FindSavedCheckpoint(v, root, 1 << 20), "./out/checkpoint-200");
  EXPECT_EQ(FindSavedCheckpoint(v, log.find("step 150"), 1 << 20), "/ckpt/a/step_100.pt");
  EXPECT_FALSE(FindSavedCheckpoint(v, 0, 1 << 20));
}

TEST(FailureHandlerTest, NewestCheckpointInJobDir) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.File("ckpt"));
  ASSERT_OK(WriteStringToFile(dir.File("ckpt/step_100.pt"), "a"));
  ASSERT_OK(WriteStringToFile(dir.File("notes.txt"), "b"));
  auto later = std::filesystem::file_time_type::clock::now() + std::chrono::hours(1);
  ASSERT_OK(WriteStringToFile(dir.File("ckpt/step_200.pt"), "c"));
  std::filesystem::last_write_time(dir.File("ckpt/step_200.pt"), later);
  auto best = FindLatestCheckpointInDir(dir.path());
  ASSERT_OK(best);
  EXPECT_EQ(best->value_or(""), dir.File("ckpt/step_200.pt"));
  EXPECT_EQ(FindLatestCheckpointInDir(dir.File("none")).status().code(), StatusCode::kNotFound);
}

TEST(FailureHandlerTest, LearnMakesMaskedExamples) {
  FailureHandler handler(BuiltinSignatures(), nullptr);
  auto ex = handler.MakeExample(
      LogView::FromString("x\nRuntimeError: lease 0x7ffe lost on /mnt/fs/a for job 12\n"),
      FailureLabel::kInfrastructure, "site");
  ASSERT_OK(ex);
  EXPECT_EQ(ex->text, "runtimeerror lease lost on for job");
  auto none =
      handler.MakeExample(LogView::FromString("all good\n"), FailureLabel::kApplication, "");
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace schedmate::failure
