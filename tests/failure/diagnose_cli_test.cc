// CLI-level tests of `schedmate diagnose` through the built binary, and the corpus scorer run.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

using testing::RunSchedmate;
using testing::RunShell;
using testing::ShellQuote;
using testing::TestDataPath;

nlohmann::json RunJson(const std::string& args) {
  auto r = RunSchedmate(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

TEST(DiagnoseCliTest, JsonShape) {
  nlohmann::json j = RunJson("diagnose " + ShellQuote(TestDataPath("failure/ecc_then_nccl.log")) +
                             " --json --no-examples --nodes 'gpu[01-02]' --job-id 42");
  ASSERT_TRUE(j["root_cause"].is_object());
  EXPECT_EQ(j["root_cause"]["line_no"], 2);
  EXPECT_EQ(j["root_cause"]["text"],
            "RuntimeError: CUDA error: uncorrectable ECC error encountered");
  EXPECT_EQ(j["label"], "infrastructure");
  EXPECT_EQ(j["category"], "gpu_hardware");
  EXPECT_TRUE(j["confidence"].is_number());
  EXPECT_GT(j["confidence"].get<double>(), 0.8);
  ASSERT_TRUE(j["evidence"].is_array());
  EXPECT_EQ(j["evidence"][0]["line_no"], 2);
  EXPECT_TRUE(j["evidence"][0]["text"].is_string());
  ASSERT_TRUE(j["plan"].is_array());
  // Multi-node job, the log names no node: the operators get the list, the job is requeued.
  EXPECT_EQ(j["plan"][0]["action"], "notify_admin");
  EXPECT_EQ(j["plan"][1]["action"], "requeue");
  EXPECT_TRUE(j["classifier_calls"].is_number_integer());
  EXPECT_GE(j["classifier_calls"].get<int>(), 2);
  EXPECT_EQ(j["context"]["first_line"], 1);
  EXPECT_EQ(j["engine"], "builtin");
}

TEST(DiagnoseCliTest, ContextOption) {
  nlohmann::json j =
      RunJson("diagnose " + ShellQuote(TestDataPath("failure/torchrun_summary.log")) +
              " --json --no-examples --context 3");
  EXPECT_EQ(j["root_cause"]["line_no"], 7);
  EXPECT_EQ(j["context"]["first_line"], 6);
  EXPECT_EQ(j["context"]["last_line"], 8);
}

TEST(DiagnoseCliTest, NoErrorIsUnknownWithNullRootAndExitZero) {
  nlohmann::json j = RunJson("diagnose " + ShellQuote(TestDataPath("failure/no_error.log")) +
                             " --json --no-examples");
  EXPECT_TRUE(j["root_cause"].is_null());
  EXPECT_EQ(j["label"], "unknown");
}

TEST(DiagnoseCliTest, MissingFileExitsOne) {
  auto r = RunSchedmate("diagnose /nonexistent/x.log --json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/x.log"), std::string::npos);
  EXPECT_EQ(RunSchedmate("diagnose").exit_code, 2);
}

// Defect 7: negative counts were accepted and planned with. Each is a usage error (exit 2).
TEST(DiagnoseCliTest, NumericOptionsAreValidatedAtParseTime) {
  const std::string log = ShellQuote(TestDataPath("failure/ecc_then_nccl.log"));
  struct Case {
    const char* name;
    const char* args;
  };
  for (const Case& c :
       {Case{"negative restarts", "--restarts -5"},
        Case{"negative max retries", "--max-retries -1"}, Case{"zero context", "--context 0"},
        Case{"not a number", "--restarts many"}}) {
    SCOPED_TRACE(c.name);
    auto r = RunSchedmate("diagnose " + log + " --json --no-examples " + c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  EXPECT_EQ(RunSchedmate("diagnose " + log + " --json --no-examples --restarts 0 --max-retries 0")
                .exit_code,
            0);
}

TEST(DiagnoseCliTest, DevicesAndFifosAreRefusedQuickly) {
  auto r = RunSchedmate("diagnose /dev/zero --json --no-examples");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/dev/zero"), std::string::npos);
}

TEST(DiagnoseCliTest, HumanReadableOutput) {
  auto r = RunSchedmate("diagnose " + ShellQuote(TestDataPath("failure/slurm_preempted.log")) +
                        " --no-examples --nodes gpu07 --restarts 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("root cause: line 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("infrastructure / preemption"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("requeue (attempt 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/ckpt/run42/step3000"), std::string::npos) << r.out;
}

TEST(DiagnoseCliTest, BadSignatureFileNamesTheLine) {
  testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("bad.yaml"),
                              "signatures:\n  - id: x\n    role: origin\n    patterns: ['a(']\n"));
  auto r = RunSchedmate("diagnose " + ShellQuote(TestDataPath("failure/no_space.log")) +
                        " --signatures " + ShellQuote(dir.File("bad.yaml")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.yaml:4: signatures[0] (id 'x'): patterns[0]"), std::string::npos)
      << r.err;
}

TEST(DiagnoseCliTest, ExtraSignaturesAndLearning) {
  testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("site.log"),
                              "step 1\nRuntimeError: weka lease lost for client 12 on /mnt/w\n"));
  std::string log = ShellQuote(dir.File("site.log"));
  std::string examples = ShellQuote(dir.File("ex/examples.jsonl"));
  nlohmann::json before = RunJson("diagnose " + log + " --json --examples " +
                                  ShellQuote(dir.path() + "/none") + " --no-examples");
  EXPECT_EQ(before["label"], "unknown");  // a bare RuntimeError is not enough

  auto learn = RunSchedmate("diagnose --learn " + log +
                            " --label infrastructure --category "
                            "site_fs --examples " +
                            examples);
  ASSERT_EQ(learn.exit_code, 0) << learn.err;
  EXPECT_NE(learn.out.find("learned infrastructure/site_fs"), std::string::npos) << learn.out;
  auto text = ReadFileToString(dir.File("ex/examples.jsonl"));
  ASSERT_OK(text);
  EXPECT_EQ(text->find("/mnt/w"), std::string::npos);  // masked, no paths stored

  ASSERT_OK(WriteStringToFile(dir.File("site2.log"),
                              "RuntimeError: weka lease lost for client 99 on /mnt/x\n"));
  nlohmann::json after =
      RunJson("diagnose " + ShellQuote(dir.File("site2.log")) + " --json --examples " + examples);
  EXPECT_EQ(after["label"], "infrastructure");
  EXPECT_EQ(after["category"], "site_fs");
  EXPECT_EQ(after["evidence"][0]["source"], "examples");

  ASSERT_OK(WriteStringToFile(dir.File("site.yaml"),
                              "signatures:\n  - id: weka\n    label: infrastructure\n    category: "
                              "storage\n    weight: 0.9\n    patterns: ['(?i)weka lease lost']\n"));
  nlohmann::json with_sig = RunJson("diagnose " + log + " --json --no-examples --signatures " +
                                    ShellQuote(dir.File("site.yaml")));
  EXPECT_EQ(with_sig["label"], "infrastructure");
  EXPECT_EQ(with_sig["category"], "storage");

  EXPECT_EQ(
      RunSchedmate("diagnose --learn " + log + " --label maybe --examples " + examples).exit_code,
      2);
}

TEST(DiagnoseCliTest, SharedCorpusMeetsTargets) {
  SM_SKIP_WITHOUT_SHARED(corpus, "corpus/failure-logs/labels.jsonl");
  SM_SKIP_WITHOUT_SHARED(scorer, "tools/score_failure.py");
  std::string folder = corpus.substr(0, corpus.rfind('/'));
  auto r = RunShell("python3 " + ShellQuote(scorer) + " " + ShellQuote(folder) + " -- " +
                    ShellQuote(testing::SchedmateBinary()) + " diagnose --json --no-examples");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  std::regex re(
      R"(root-cause hits \d+/\d+ \(([\d.]+)%\).*infra F1 ([\d.]+), app F1 ([\d.]+), macro F1 ([\d.]+))");
  ASSERT_TRUE(std::regex_search(r.out, m, re)) << r.out;
  EXPECT_GE(std::stod(m[1]), 90.0) << r.out;
  EXPECT_GE(std::stod(m[2]), 0.90) << r.out;
  EXPECT_GE(std::stod(m[4]), 0.90) << r.out;
}

}  // namespace
}  // namespace schedmate::failure
