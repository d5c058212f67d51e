// `schedmate advise --engine ...` end to end: the built binary against the scripted server
// (SCHEDMATE_LLM_BASE_URL), a dead port, and no configuration.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "advisor/job_metadata.h"
#include "core/file_util.h"
#include "testing/llm/llm_cli_env.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using nlohmann::json;
using schedmate::testing::RunSchedmateWithLlm;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;
using schedmate::testing::ShellQuote;

class AdviseLlmCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(server_.Start());
    job_ = dir_.path() + "/job";
    std::filesystem::create_directories(job_);
    ASSERT_OK(WriteStringToFile(job_ + "/train.sh",
                                "#!/bin/bash\ntorchrun --nproc_per_node=2 train.py --epochs 3\n"));
    ASSERT_OK(WriteStringToFile(job_ + "/train.py",
                                "import argparse\np = argparse.ArgumentParser()\n"
                                "p.add_argument('--epochs', type=int, default=1)\n"));
  }
  static std::string Answer(const json& set) {
    json a = json::object();
    for (std::string_view f : advisor::kMetadataFields) a[std::string(f)] = nullptr;
    for (auto it = set.begin(); it != set.end(); ++it) a[it.key()] = it.value();
    return a.dump();
  }
  ScriptedChatServer server_;
  schedmate::testing::TempDir dir_;
  std::string job_;
};

TEST_F(AdviseLlmCliTest, LlmEngineFillsGapsAndSaysSo) {
  server_.EnqueueChat(ScriptedReply::ToolCalls({{"c1", "file_read", R"({"path":"train.py"})"}}));
  server_.EnqueueChat(ScriptedReply::Text(Answer({{"dataset", "wikitext-103"}, {"epochs", 99}})));
  auto r = RunSchedmateWithLlm(server_.base_url(),
                               "advise " + ShellQuote(job_) + " --json --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "llm (scripted-model)");
  EXPECT_EQ(j["metadata"]["dataset"], "wikitext-103");
  EXPECT_EQ(j["sources"]["dataset"], "llm");
  EXPECT_EQ(j["metadata"]["epochs"], 3);  // the built-in value with provenance wins
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 2u);
}

// --engine auto: a job whose workload the built-in engine reads with confidence never reaches the
// server (not even the probe); an unsure one does, and only its unsure fields take the LLM's
// values.
TEST_F(AdviseLlmCliTest, AutoAsksOnlyWhenTheBuiltinAnswerIsUnsure) {
  const std::string sure = dir_.path() + "/sure";
  std::filesystem::create_directories(sure);
  ASSERT_OK(WriteStringToFile(sure + "/train.sh",
                              "#!/bin/bash\ntorchrun --nproc_per_node=4 fit.py --model resnet50 "
                              "--dataset cifar100 --batch_size 64 --epochs 30\n"));
  auto quiet = RunSchedmateWithLlm(server_.base_url(),
                                   "advise " + ShellQuote(sure) + " --json --engine auto");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  json q = json::parse(quiet.out);
  EXPECT_EQ(q["engine"], "builtin");
  EXPECT_TRUE(server_.requests().empty());  // no chat, no probe
  EXPECT_GE(q["builtin_confidence"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(q["confidence"]["epochs"].get<double>(), 0.95);
  EXPECT_EQ(q["field_engines"]["epochs"], "builtin");

  // job_: no batch size anywhere, so the answer as a whole is unsure. Auto probes first.
  server_.EnqueueChat(ScriptedReply::Text("ok"));
  server_.EnqueueChat(ScriptedReply::Text(
      Answer({{"per_device_batch_size", 16}, {"dataset", "wikitext-103"}, {"epochs", 99}})));
  auto asked = RunSchedmateWithLlm(
      server_.base_url(), "advise " + ShellQuote(job_) + " --json --engine auto --llm-below 0.8");
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  json a = json::parse(asked.out);
  EXPECT_EQ(a["engine"], "llm (scripted-model)");
  EXPECT_LT(a["builtin_confidence"].get<double>(), 0.8);
  EXPECT_EQ(a["metadata"]["per_device_batch_size"], 16);
  EXPECT_EQ(a["field_engines"]["per_device_batch_size"], "llm");
  EXPECT_FALSE(a["confidence"].contains("per_device_batch_size"));
  EXPECT_EQ(a["metadata"]["epochs"], 3);  // sure (command line): kept
  EXPECT_EQ(a["field_engines"]["epochs"], "builtin");
  EXPECT_GE(server_.CountRequests("/v1/chat/completions"), 1u);
}

TEST_F(AdviseLlmCliTest, DeadPortFallsBackWithTheReason) {
  const std::string url = server_.base_url();
  server_.Stop();
  auto r = RunSchedmateWithLlm(url, "advise " + ShellQuote(job_) + " --json --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "builtin (llm unavailable: connection refused)");
  EXPECT_EQ(j["metadata"]["epochs"], 3);
  EXPECT_NE(r.err.find("schedmate: warning: advise: the LLM failed (connection refused"),
            std::string::npos)
      << r.err;
  auto a = RunSchedmateWithLlm(url, "advise " + ShellQuote(job_) + " --json --engine auto");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(json::parse(a.out)["engine"], "builtin (llm unavailable: connection refused)");
}

TEST_F(AdviseLlmCliTest, MalformedAnswerAndNoConfiguration) {
  server_.SetChatHandler([](const json&) { return ScriptedReply::Text("not json at all {"); });
  auto r = RunSchedmateWithLlm(server_.base_url(),
                               "advise " + ShellQuote(job_) + " --json --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["engine"].get<std::string>().rfind(
                "builtin (llm answer rejected: malformed JSON from model", 0),
            0u)
      << r.out;
  auto none = RunSchedmateWithLlm("", "advise " + ShellQuote(job_) + " --json --engine auto");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(json::parse(none.out)["engine"], "builtin");
  auto def = RunSchedmateWithLlm(server_.base_url(), "advise " + ShellQuote(job_) + " --json");
  ASSERT_EQ(def.exit_code, 0) << def.err;
  EXPECT_EQ(json::parse(def.out)["engine"], "builtin");  // builtin is the default
  auto bad = RunSchedmateWithLlm("", "advise " + ShellQuote(job_) + " --engine gpt");
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace schedmate
