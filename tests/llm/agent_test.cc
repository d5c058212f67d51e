#include "llm/agent.h"

#include <gtest/gtest.h>

#include "llm/curl_transport.h"
#include "llm/openai_client.h"
#include "testing/llm/fake_chat_client.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;
using schedmate::testing::FakeChatClient;

// file_read over a tiny in-memory tree, recording what it was asked.
struct Files {
  std::map<std::string, std::string> files = {{"train.py", "for epoch in range(90):\n  train()"},
                                              {"big.log", std::string(5000, 'x')}};
  std::vector<std::string> asked;
  AgentTool ReadTool() {
    return {ToolSpec{"file_read",
                     "Read a file of the job's directory.",
                     {{"type", "object"},
                      {"properties", {{"path", {{"type", "string"}}}}},
                      {"required", {"path"}}}},
            [this](const json& args) -> Result<std::string> {
              const std::string path = args["path"];
              asked.push_back(path);
              auto it = files.find(path);
              if (it == files.end()) return Status::NotFound("no such file: " + path);
              return it->second;
            }};
  }
};

TEST(AgentTest, ToolCallThenToolResultThenFinalAnswer) {
  Files fs;
  FakeChatClient fake;
  fake.EnqueueToolCalls({{"c1", "file_read", R"({"path":"train.py"})"}});
  fake.EnqueueText("The job trains for 90 epochs.");
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(fake, "You inspect jobs.", "How many epochs?", tools);
  ASSERT_OK(r);
  EXPECT_EQ(r->final_text, "The job trains for 90 epochs.");
  EXPECT_EQ(r->steps, 2);
  EXPECT_EQ(fs.asked, (std::vector<std::string>{"train.py"}));
  ASSERT_EQ(r->tool_calls.size(), 1u);
  EXPECT_TRUE(r->tool_calls[0].ok);
  // The second request carries the tool result, answering the call by id, and offers the tool.
  const ChatRequest second = fake.requests()[1];
  ASSERT_EQ(second.messages.size(), 4u);
  EXPECT_EQ(second.messages[2].tool_calls[0].id, "c1");
  EXPECT_EQ(second.messages[3].role, Role::kTool);
  EXPECT_EQ(second.messages[3].tool_call_id, "c1");
  EXPECT_EQ(second.messages[3].content, fs.files["train.py"]);
  ASSERT_EQ(second.tools.size(), 1u);
  EXPECT_EQ(second.tools[0].name, "file_read");
  EXPECT_EQ(r->transcript.size(), 5u);
}

TEST(AgentTest, BadCallsAreAnsweredWithErrorsTheModelCanFix) {
  Files fs;
  FakeChatClient fake;
  fake.EnqueueToolCalls({{"a", "file_write", R"({"path":"x"})"},
                         {"b", "file_read", R"({"path":)"},
                         {"c", "file_read", R"({"file":"train.py"})"},
                         {"d", "file_read", R"({"path":"missing.py"})"}});
  fake.EnqueueText("done");
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(fake, "s", "u", tools);
  ASSERT_OK(r);
  const auto msgs = fake.requests()[1].messages;
  ASSERT_EQ(msgs.size(), 7u);
  EXPECT_EQ(msgs[3].content, "error: unknown tool 'file_write'; available tools: file_read");
  EXPECT_NE(msgs[4].content.find("not valid JSON"), std::string::npos);
  EXPECT_NE(msgs[5].content.find("missing required property \"path\""), std::string::npos);
  EXPECT_EQ(msgs[6].content, "error: no such file: missing.py");
  for (const auto& rec : r->tool_calls) EXPECT_FALSE(rec.ok);
}

TEST(AgentTest, LongToolResultsAreTruncated) {
  Files fs;
  FakeChatClient fake;
  fake.EnqueueToolCalls({{"c", "file_read", R"({"path":"big.log"})"}});
  fake.EnqueueText("ok");
  AgentLimits limits;
  limits.max_tool_bytes = 100;
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(fake, "s", "u", tools, limits);
  ASSERT_OK(r);
  EXPECT_TRUE(r->tool_calls[0].truncated);
  EXPECT_EQ(r->tool_calls[0].result_bytes, 5000u);
  const std::string sent = fake.requests()[1].messages[3].content;
  EXPECT_EQ(sent.substr(0, 100), std::string(100, 'x'));
  EXPECT_NE(sent.find("[truncated: first 100 of 5000 bytes shown]"), std::string::npos);
}

TEST(AgentTest, EndlessToolLoopIsABoundedError) {
  Files fs;
  FakeChatClient fake;
  int n = 0;
  fake.SetHandler([&](const ChatRequest&) -> Result<ChatResponse> {
    ChatResponse r;
    r.message = ChatMessage::Assistant(
        "", {ToolCall{"", "file_read", "{\"path\":\"f" + std::to_string(n++) + "\"}"}});
    return r;
  });
  AgentLimits limits;
  limits.max_steps = 5;
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(fake, "s", "u", tools, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(),
            "tool loop did not end; no final answer within 5 steps (5 tool calls)");
  EXPECT_EQ(fake.calls(), 5u);
  // Ids were filled in for calls that came without one.
  EXPECT_EQ(fake.requests()[1].messages[2].tool_calls[0].id, "call_1_0");
}

TEST(AgentTest, RepeatingTheSameCallStopsEarly) {
  Files fs;
  FakeChatClient fake;
  fake.SetHandler([](const ChatRequest&) -> Result<ChatResponse> {
    ChatResponse r;
    r.message = ChatMessage::Assistant("", {ToolCall{"x", "file_read", R"({"path": "train.py"})"}});
    return r;
  });
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(fake, "s", "u", tools);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("3 times with the same arguments"), std::string::npos);
  EXPECT_EQ(fake.calls(), 3u);
}

TEST(AgentTest, FinalAnswerIsValidatedAgainstTheSchema) {
  Files fs;
  FakeChatClient fake;
  fake.EnqueueText("90 epochs");  // not JSON: one correction turn
  fake.EnqueueText(R"({"epochs": 90})");
  AgentOptions opts;
  opts.final_schema = json{{"type", "object"},
                           {"properties", {{"epochs", {{"type", "integer"}}}}},
                           {"required", {"epochs"}}};
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(fake, "s", "u", tools, {}, opts);
  ASSERT_OK(r);
  ASSERT_TRUE(r->final_json.has_value());
  EXPECT_EQ((*r->final_json)["epochs"], 90);
  EXPECT_EQ(r->steps, 2);
}

TEST(AgentTest, ModelErrorsAndBadToolsAreReported) {
  Files fs;
  FakeChatClient fake;
  fake.Enqueue(Status::DeadlineExceeded("timeout after 20 s; POST u"));
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(fake, "s", "u", tools);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message(), "timeout after 20 s; POST u; agent step 1");
  const AgentTool dup[] = {fs.ReadTool(), fs.ReadTool()};
  EXPECT_EQ(RunAgent(fake, "s", "u", dup).status().code(), StatusCode::kInvalidArgument);
}

TEST(AgentTest, FullLoopOverHttp) {
  schedmate::testing::ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.EnqueueChat(schedmate::testing::ScriptedReply::ToolCalls(
      {{"call_9", "file_read", R"({"path":"train.py"})"}}));
  server.EnqueueChat(schedmate::testing::ScriptedReply::Text("90 epochs"));
  CurlHttpTransport transport;
  OpenAiCompatibleClient client(
      {server.base_url(), "m", "", Duration::Seconds(2), Duration::Seconds(5)}, transport);
  Files fs;
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(client, "s", "u", tools);
  ASSERT_OK(r);
  EXPECT_EQ(r->final_text, "90 epochs");
  EXPECT_EQ(r->usage.total_tokens, 30 + 15);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].json["tools"][0]["function"]["name"], "file_read");
  const json& msgs = reqs[1].json["messages"];
  ASSERT_EQ(msgs.size(), 4u);
  EXPECT_EQ(msgs[2]["tool_calls"][0]["id"], "call_9");
  EXPECT_EQ(
      msgs[3],
      (json{{"role", "tool"}, {"tool_call_id", "call_9"}, {"content", fs.files["train.py"]}}));
}

}  // namespace
}  // namespace schedmate::llm

namespace schedmate::llm {
namespace {

TEST(AgentReactTest, TextProtocolForServersWithoutToolCalls) {
  Files fs;
  FakeChatClient fake;
  fake.EnqueueText(
      "Thought: I should read the script.\nAction: file_read\nAction Input: {\"path\": "
      "\"train.py\"}\n");
  fake.EnqueueText("Thought: done.\nFinal Answer: 90 epochs");
  AgentOptions opts;
  opts.protocol = AgentProtocol::kReactText;
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(fake, "You inspect jobs.", "How many epochs?", tools, {}, opts);
  ASSERT_OK(r);
  EXPECT_EQ(r->final_text, "90 epochs");
  EXPECT_EQ(fs.asked, (std::vector<std::string>{"train.py"}));
  const auto reqs = fake.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_TRUE(reqs[0].tools.empty());
  EXPECT_EQ(reqs[0].stop, (std::vector<std::string>{"Observation:"}));
  EXPECT_NE(reqs[0].messages[0].content.find("Action Input: <JSON object"), std::string::npos);
  EXPECT_NE(reqs[0].messages[0].content.find("file_read: Read a file"), std::string::npos);
  const auto& msgs = reqs[1].messages;
  ASSERT_EQ(msgs.size(), 4u);
  EXPECT_EQ(msgs[2].role, Role::kAssistant);
  EXPECT_TRUE(msgs[2].tool_calls.empty());
  EXPECT_EQ(msgs[3].role, Role::kUser);
  EXPECT_EQ(msgs[3].content, "Observation: " + fs.files["train.py"]);
}

TEST(AgentReactTest, BadActionsAreObservedAndPlainTextIsFinal) {
  Files fs;
  FakeChatClient fake;
  fake.EnqueueText("Action: file_delete\nAction Input: {}");
  fake.EnqueueText("The answer is 90.");
  AgentOptions opts;
  opts.protocol = AgentProtocol::kReactText;
  const AgentTool tools[] = {fs.ReadTool()};
  auto r = RunAgent(fake, "s", "u", tools, {}, opts);
  ASSERT_OK(r);
  EXPECT_EQ(r->final_text, "The answer is 90.");
  EXPECT_EQ(fake.requests()[1].messages[3].content,
            "Observation: error: unknown tool 'file_delete'; available tools: file_read");
}

}  // namespace
}  // namespace schedmate::llm
