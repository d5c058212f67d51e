// The service's failure diagnoser with an LLM (llm.engine): the model's classification when it
// answers, the built-in diagnosis (named as a fallback) when it does not, and the engine kinds
// /metrics counts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "llm/llm_setup.h"
#include "service/companion.h"
#include "service/component_adapters.h"
#include "service/engines.h"
#include "store/history_store.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using nlohmann::json;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;

// Line 4 is the Xid report the built-in signatures call infrastructure.
constexpr const char* kXidLog =
    "step 1200/5000 loss 0.31\n"
    "Saved checkpoint to ckpt/step_1200.pt\n"
    "step 1250/5000 loss 0.30\n"
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus\n"
    "RuntimeError: CUDA error: unspecified launch failure\n";

std::shared_ptr<llm::LlmSetup> LlmAt(const std::string& url) {
  llm::LlmConfig c;
  c.chat.base_url = url;
  c.chat.model = "scripted-model";
  c.chat.timeout = Duration::Seconds(5);
  c.max_retries = 0;
  auto s = llm::LlmSetup::Create(c);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::shared_ptr<llm::LlmSetup>(std::move(s).value()) : nullptr;
}

FailedJob Job() {
  return FailedJob{"12", "train", "FAILED", 1, 0, {"gpu3"}, Duration::Minutes(20)};
}

TEST(LlmDiagnoser, TheModelClassifiesTheLocatedWindow) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.EnqueueChat(ScriptedReply::Text(json{
      {"label", "application"},
      {"category", "scripted_category"},
      {"confidence", 0.9},
      {"root_cause_line", 5},
      {"evidence", {{{"line_no", 5}}}}}.dump()));
  auto diag = FailureHandlerDiagnoser::Create(Duration::Seconds(60), Duration::Minutes(30),
                                              LlmAt(server.base_url()));
  ASSERT_OK(diag);
  auto d = (*diag)->Diagnose(Job(), kXidLog);
  ASSERT_OK(d);
  EXPECT_EQ(d->engine, "failure-handler llm (scripted-model)");
  EXPECT_EQ(d->cls, FailureClass::kApp);
  EXPECT_EQ(d->category, "scripted_category");
  EXPECT_EQ(FailureEngineKind(d->engine), "llm");
  EXPECT_EQ(server.CountRequests("/v1/chat/completions"), 1u);
}

TEST(LlmDiagnoser, ADeadModelGivesTheBuiltInDiagnosisAndSaysWhy) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  const std::string url = server.base_url();
  server.Stop();
  auto with_llm =
      FailureHandlerDiagnoser::Create(Duration::Seconds(60), Duration::Minutes(30), LlmAt(url));
  auto builtin = FailureHandlerDiagnoser::Create(Duration::Seconds(60), Duration::Minutes(30));
  ASSERT_OK(with_llm);
  ASSERT_OK(builtin);
  auto d = (*with_llm)->Diagnose(Job(), kXidLog);
  auto b = (*builtin)->Diagnose(Job(), kXidLog);
  ASSERT_OK(d);
  ASSERT_OK(b);
  EXPECT_EQ(d->engine, "failure-handler builtin (llm unavailable: connection refused)");
  EXPECT_EQ(FailureEngineKind(d->engine), "llm_fallback");
  EXPECT_EQ(b->engine, "failure-handler");
  EXPECT_EQ(FailureEngineKind(b->engine), "builtin");
  // Same answer as the built-in engine.
  EXPECT_EQ(d->cls, FailureClass::kInfra);
  EXPECT_EQ(d->cls, b->cls);
  EXPECT_EQ(d->category, b->category);
  EXPECT_EQ(d->evidence_line, b->evidence_line);
  EXPECT_EQ(d->plan.size(), b->plan.size());
}

TEST(LlmDiagnoser, MakeEnginesFollowsTheEngineRule) {
  auto history = store::SqliteHistoryStore::Open(":memory:");
  ASSERT_OK(history);
  ServiceConfig config;
  config.llm_engine = "auto";
  config.llm_config = "/nonexistent/llm.yaml";  // a named file that is missing is an error
  auto missing = MakeEngines(config, **history);
  EXPECT_FALSE(missing.ok());
  // A configuration naming a dead endpoint: auto probes, finds it down, stays built-in.
  testing::TempDir dir;
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  const std::string url = server.base_url();
  server.Stop();
  config.llm_config = dir.File("llm.yaml");
  ASSERT_OK(WriteStringToFile(config.llm_config,
                              "chat:\n  base_url: " + url + "\n  model: scripted-model\n"));
  auto engines = MakeEngines(config, **history);
  ASSERT_OK(engines);
  EXPECT_NE(engines->description.find("failure=failure-handler builtin (llm unavailable: "),
            std::string::npos)
      << engines->description;
  EXPECT_NE(engines->notice.find("--engine auto"), std::string::npos) << engines->notice;
  config.llm_engine = "builtin";
  auto plain = MakeEngines(config, **history);
  ASSERT_OK(plain);
  EXPECT_EQ(plain->description,
            "advisor=history-estimator tracker=metric-tracker failure=failure-handler");
  EXPECT_TRUE(plain->notice.empty());
}

}  // namespace
}  // namespace schedmate::service
