#include "llm/complete_json.h"

#include <gtest/gtest.h>

#include "llm/curl_transport.h"
#include "llm/json_schema.h"
#include "llm/openai_client.h"
#include "testing/llm/fake_chat_client.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;
using schedmate::testing::FakeChatClient;

const json kMetaSchema = {
    {"type", "object"},
    {"properties",
     {{"framework", {{"type", "string"}, {"enum", {"pytorch", "jax", "other"}}}},
      {"epochs", {{"type", "integer"}, {"minimum", 1}, {"nullable", true}}},
      {"datasets", {{"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", 3}}}}},
    {"required", {"framework", "epochs"}},
    {"additionalProperties", false}};

std::vector<ChatMessage> Prompt() { return {ChatMessage::User("extract")}; }

TEST(CompleteJsonTest, ReturnsValidJsonAndSendsTheSchema) {
  FakeChatClient fake;
  fake.EnqueueText(R"({"framework":"pytorch","epochs":3,"datasets":["imagenet"]})");
  auto r = CompleteJson(fake, Prompt(), kMetaSchema);
  ASSERT_OK(r);
  EXPECT_EQ((*r)["epochs"], 3);
  const ChatRequest sent = fake.requests()[0];
  ASSERT_TRUE(sent.response_format.has_value());
  EXPECT_EQ(sent.response_format->schema, kMetaSchema);
  EXPECT_TRUE(sent.response_format->strict);
  EXPECT_EQ(sent.temperature, 0.0);
}

TEST(CompleteJsonTest, AcceptsAFencedAnswer) {
  FakeChatClient fake;
  fake.EnqueueText("```json\n{\"framework\":\"jax\",\"epochs\":null}\n```\n");
  auto r = CompleteJson(fake, Prompt(), kMetaSchema);
  ASSERT_OK(r);
  EXPECT_EQ((*r)["framework"], "jax");
}

TEST(CompleteJsonTest, MalformedJsonIsAnErrorAfterOneRepair) {
  FakeChatClient fake;
  fake.EnqueueText("{\"framework\": \"pytorch\", ");
  fake.EnqueueText("Sure! Here it is: framework=pytorch");
  auto r = CompleteJsonDetailed(fake, Prompt(), kMetaSchema);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message().rfind("malformed JSON from model", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find("after 2 attempts"), std::string::npos);
  ASSERT_EQ(fake.calls(), 2u);
  // The repair turn tells the model what was wrong.
  const auto repair = fake.requests()[1].messages;
  ASSERT_EQ(repair.size(), 3u);
  EXPECT_EQ(repair[1].role, Role::kAssistant);
  EXPECT_NE(repair[2].content.find("malformed JSON"), std::string::npos);
}

// Found by the llama-server e2e test: grammar-valid JSON whose number overflows a double must be
// a DataLoss answer, not an exception; the excerpt must stay valid UTF-8.
TEST(CompleteJsonTest, OverflowingNumberAndMultibyteExcerptAreRejectedCleanly) {
  FakeChatClient fake;
  const std::string overflow =
      R"({"framework":"jax","epochs":-2222229999999999.1e9999999999999999})";
  fake.EnqueueText(overflow);
  // The excerpt (160 bytes) would end inside the 3-byte character starting at byte 159.
  fake.EnqueueText(overflow + std::string(159 - overflow.size(), ' ') + "\xE7\x81\xB5 }");
  auto r = CompleteJson(fake, Prompt(), kMetaSchema);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message().rfind("malformed JSON from model", 0), 0u) << r.status().message();
  EXPECT_NO_THROW((void)json(r.status().message()).dump());  // valid UTF-8
}

TEST(CompleteJsonTest, SchemaViolationThenValidSucceedsOnTheRepair) {
  FakeChatClient fake;
  fake.EnqueueText(R"({"framework":"tensorflow","epochs":3})", 10);
  fake.EnqueueText(R"({"framework":"other","epochs":3})", 12);
  auto r = CompleteJsonDetailed(fake, Prompt(), kMetaSchema);
  ASSERT_OK(r);
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->usage.total_tokens, 22);
  EXPECT_EQ(r->value["framework"], "other");
  EXPECT_NE(fake.requests()[1].messages[2].content.find("$.framework"), std::string::npos);
}

TEST(CompleteJsonTest, SchemaViolationWithoutRepairNamesThePath) {
  FakeChatClient fake;
  fake.EnqueueText(R"({"framework":"jax"})");
  JsonCallOptions o;
  o.repair_attempts = 0;
  auto r = CompleteJson(fake, Prompt(), kMetaSchema, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message(),
            "schema violation at $: missing required property \"epochs\"; after 1 attempt");
}

TEST(CompleteJsonTest, CallErrorsPassThroughAndBadSchemasAreRefused) {
  FakeChatClient fake;
  fake.Enqueue(Status::Unavailable("connection refused; x"));
  EXPECT_EQ(CompleteJson(fake, Prompt(), kMetaSchema).status().code(), StatusCode::kUnavailable);
  auto bad = CompleteJson(fake, Prompt(), json{{"type", "string"}, {"pattern", "^a"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'pattern'"), std::string::npos);
}

TEST(CompleteJsonTest, ViolatingJsonOverHttpIsRejected) {
  schedmate::testing::ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.EnqueueChat(
      schedmate::testing::ScriptedReply::Text(R"({"framework":"pytorch","epochs":"three"})"));
  CurlHttpTransport transport;
  OpenAiCompatibleClient client(
      {server.base_url(), "m", "", Duration::Seconds(2), Duration::Seconds(5)}, transport);
  JsonCallOptions o;
  o.repair_attempts = 0;
  auto r = CompleteJson(client, Prompt(), kMetaSchema, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("schema violation at $.epochs: expected integer, got string"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(server.requests()[0].json["response_format"]["json_schema"]["schema"], kMetaSchema);
}

TEST(JsonSchemaTest, ValidatesTheSupportedSubset) {
  struct Case {
    const char* name;
    json value;
    const char* error;  // nullptr: valid
  };
  const Case cases[] = {
      {"valid", {{"framework", "jax"}, {"epochs", 2}}, nullptr},
      {"integral float is an integer", {{"framework", "jax"}, {"epochs", 2.0}}, nullptr},
      {"nullable", {{"framework", "jax"}, {"epochs", nullptr}}, nullptr},
      {"fraction is not an integer",
       {{"framework", "jax"}, {"epochs", 2.5}},
       "$.epochs: expected integer"},
      {"below minimum", {{"framework", "jax"}, {"epochs", 0}}, "below the minimum"},
      {"enum", {{"framework", "mxnet"}, {"epochs", 1}}, "is not one of"},
      {"missing required", {{"framework", "jax"}}, "missing required property \"epochs\""},
      {"extra property",
       {{"framework", "jax"}, {"epochs", 1}, {"x", 1}},
       "unexpected property \"x\""},
      {"item type", {{"framework", "jax"}, {"epochs", 1}, {"datasets", {"a", 2}}}, "$.datasets[1]"},
      {"max items",
       {{"framework", "jax"}, {"epochs", 1}, {"datasets", {"a", "b", "c", "d"}}},
       "more than 3"},
      {"not an object", json::array(), "expected object, got array"},
  };
  // String lengths count characters (code points), as JSON Schema and llama.cpp's grammar do.
  const json name_schema = {{"type", "string"}, {"minLength", 2}, {"maxLength", 6}};
  EXPECT_OK(ValidateJson("+Prem\u7075", name_schema));     // 6 characters, 8 bytes
  EXPECT_FALSE(ValidateJson("\u7075", name_schema).ok());  // 1 character, 3 bytes
  EXPECT_FALSE(ValidateJson("abcdefg", name_schema).ok());
  ASSERT_OK(CheckSchemaSupported(kMetaSchema));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Status s = ValidateJson(c.value, kMetaSchema);
    if (c.error == nullptr) {
      EXPECT_OK(s);
    } else {
      EXPECT_EQ(s.code(), StatusCode::kDataLoss);
      EXPECT_NE(s.message().find(c.error), std::string::npos) << s.message();
    }
  }
  EXPECT_OK(ValidateJson(json(3), json{{"type", json{"string", "integer"}}}));
  EXPECT_FALSE(CheckSchemaSupported(json{{"type", "strin"}}).ok());
  EXPECT_FALSE(CheckSchemaSupported(json{{"oneOf", json::array()}}).ok());
  EXPECT_FALSE(CheckSchemaSupported(json{{"properties", {{"a", {{"minItems", -1}}}}}}).ok());
}

}  // namespace
}  // namespace schedmate::llm
