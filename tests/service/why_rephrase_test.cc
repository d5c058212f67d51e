// The LLM rephrasing of a why-answer (service/why_rephrase.h) against the scripted
// OpenAI-compatible server: the model sees only the structured answer; a faithful reply is taken,
// a reply with a number, time, node or partition the facts do not hold is rejected.

#include "service/why_rephrase.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llm/llm_setup.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using nlohmann::json;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;

constexpr int64_t kEnd = 1795784700;    // 2026-11-27T13:05:00Z
constexpr int64_t kStart = 1795785000;  // 2026-11-27T13:10:00Z

json Answer() {
  return json{
      {"job_id", "42"},
      {"state", "PENDING"},
      {"reason_code", "Resources"},
      {"reason_kind", "resources"},
      {"reason_known", true},
      {"explanation",
       "Job 42 waits for resources: it asks for 4 GPUs and partition gpu has 2 free."},
      {"evidence",
       {{{"kind", "free_gpus"},
         {"text", "2 GPUs free in gpu"},
         {"partition", "gpu"},
         {"value", 2},
         {"at", nullptr}},
        {{"kind", "running_job"},
         {"text", "job 40 on node07 ends at its time limit"},
         {"job_id", "40"},
         {"node", "node07"},
         {"at", kEnd},
         {"source", "time_limit"}}}},
      {"expected_start", kStart},
      {"suggestions",
       {{{"change", "--gres=gpu:2"}, {"expected_start", nullptr}, {"why", "2 GPUs are free now"}}}},
  };
}

std::unique_ptr<llm::LlmSetup> LlmAt(const std::string& url) {
  llm::LlmConfig c;
  c.chat.base_url = url;
  c.chat.model = "scripted-model";
  c.chat.timeout = Duration::Seconds(5);
  c.max_retries = 0;
  auto s = llm::LlmSetup::Create(c);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

class WhyRephraseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(server_.Start());
    llm_ = LlmAt(server_.base_url());
    ASSERT_NE(llm_, nullptr);
  }
  Result<std::string> Ask(const std::string& reply, WhyRephraseOptions options = {}) {
    server_.EnqueueChat(ScriptedReply::Text(reply));
    return RephraseWhy(Answer(), llm_->chat(), options);
  }
  ScriptedChatServer server_;
  std::unique_ptr<llm::LlmSetup> llm_;
};

TEST_F(WhyRephraseTest, AFaithfulReplyIsTaken) {
  const std::string reply =
      "Your job 42 is waiting because it needs 4 GPUs and only 2 are free in partition gpu. "
      "Job 40 on node07 should finish at 13:05 on 2026-11-27, and yours should start around "
      "2026-11-27T13:10:00Z. Asking for 2 GPUs (--gres=gpu:2) would let it start now.";
  auto r = Ask(reply);
  ASSERT_OK(r);
  EXPECT_EQ(*r, reply);
  // The model was given the structured answer, with times as UTC text, and nothing else.
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1u);
  const json& messages = requests[0].json["messages"];
  ASSERT_EQ(messages.size(), 2u);
  const std::string user = messages[1]["content"].get<std::string>();
  EXPECT_NE(user.find("2026-11-27T13:05:00Z"), std::string::npos);
  EXPECT_EQ(user.find(std::to_string(kEnd)), std::string::npos);
  EXPECT_NE(user.find("node07"), std::string::npos);
  EXPECT_EQ(requests[0].json["temperature"], 0);
}

TEST_F(WhyRephraseTest, AReplyThatInventsANumberIsRejected) {
  auto r = Ask("Job 42 waits for 4 GPUs; it should start in about 45 minutes.");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("45"), std::string::npos);
}

TEST_F(WhyRephraseTest, InventedTimesNodesAndPartitionsAreRejected) {
  struct Case {
    const char* reply;
    const char* invented;
  } cases[] = {
      {"Job 40 ends at 14:30, then job 42 starts.", "14:30"},
      {"Job 42 starts on 2026-11-28.", "2026-11-28"},
      {"Job 40 on node13 is in the way of job 42.", "node13"},
      {"Job 42 could start now in partition debug.", "debug"},
      {"Job 43 is ahead of it.", "43"},
  };
  WhyRephraseOptions options;
  options.known_names = {"gpu", "debug", "node07", "node13"};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.reply);
    auto r = Ask(c.reply, options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(r.status().message().find(c.invented), std::string::npos) << r.status().message();
  }
}

TEST_F(WhyRephraseTest, EmptyAndOverlongRepliesAreRejected) {
  auto empty = Ask("   ");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kDataLoss);
  auto overlong = Ask(std::string(3000, 'a'));
  ASSERT_FALSE(overlong.ok());
  EXPECT_EQ(overlong.status().code(), StatusCode::kDataLoss);
}

TEST_F(WhyRephraseTest, ADeadServerIsUnavailable) {
  const std::string url = server_.base_url();
  server_.Stop();
  auto dead = LlmAt(url);
  ASSERT_NE(dead, nullptr);
  auto r = RephraseWhy(Answer(), dead->chat());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

TEST(WhyFactCheck, AcceptsTheFactsInOtherWords) {
  const json facts = WhyFacts(Answer());
  for (const char* ok : {"A 4-GPU request waits; 2 GPUs are free.", "Job 42 (Resources).",
                         "node07 frees its GPUs at 13:05:00.", "It needs 4 GPUs, not 2.",
                         "Use --gres=gpu:2.", "Nothing else is known."}) {
    SCOPED_TRACE(ok);
    EXPECT_TRUE(FindUnsupported(ok, facts).empty());
  }
}

TEST(WhyFactCheck, ListsWhatIsNotInTheFacts) {
  const json facts = WhyFacts(Answer());
  EXPECT_EQ(FindUnsupported("Job 42 needs 8 GPUs, or 2.5 GPUs, or 1,000 GPUs.", facts),
            (std::vector<std::string>{"8", "2.5", "1,000"}));
  EXPECT_EQ(FindUnsupported("node08 and gpu7 and p95", facts),
            (std::vector<std::string>{"node08", "gpu7", "p95"}));
  EXPECT_EQ(FindUnsupported("at 9:05 and 13:05", facts), (std::vector<std::string>{"09:05"}));
  EXPECT_EQ(FindUnsupported("job 42_3", facts), (std::vector<std::string>{"42_3"}));
}

TEST(WhyFactCheck, SetExplanationKeepsTheBuiltInText) {
  json a = Answer();
  const std::string builtin = a["explanation"];
  SetExplanation(a, std::string("Plain words."), "llm (scripted-model)");
  EXPECT_EQ(a["explanation"], "Plain words.");
  EXPECT_EQ(a["builtin_explanation"], builtin);
  EXPECT_EQ(a["explanation_source"], "llm (scripted-model)");
  json b = Answer();
  SetExplanation(b, std::nullopt, "builtin (llm answer rejected: reply names facts not given: 45)");
  EXPECT_EQ(b["explanation"], builtin);
  EXPECT_FALSE(b.contains("builtin_explanation"));
  EXPECT_EQ(b["explanation_source"],
            "builtin (llm answer rejected: reply names facts not given: 45)");
}

}  // namespace
}  // namespace schedmate::service
