#include "llm/llm_config.h"

#include <gtest/gtest.h>

#include <map>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::llm {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(LlmConfigTest, NothingSetMeansNotConfigured) {
  auto c = LoadLlmConfig(std::nullopt, Env({}));
  ASSERT_OK(c);
  EXPECT_FALSE(c->chat_configured());
  EXPECT_FALSE(c->embeddings_configured());
  EXPECT_EQ(c->source, "none");
}

TEST(LlmConfigTest, EnvironmentConfiguresChatAndEmbeddings) {
  schedmate::testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("key"), "  k-from-file\n"));
  auto c = LoadLlmConfig(std::nullopt, Env({{"SCHEDMATE_LLM_BASE_URL", "http://gpu1:8000"},
                                            {"SCHEDMATE_LLM_MODEL", "Qwen2.5-7B-Instruct"},
                                            {"SCHEDMATE_LLM_API_KEY_FILE", dir.File("key")},
                                            {"SCHEDMATE_EMBED_MODEL", "bge-m3"}}));
  ASSERT_OK(c);
  EXPECT_TRUE(c->chat_configured());
  EXPECT_EQ(c->chat.base_url, "http://gpu1:8000");
  EXPECT_EQ(c->chat.model, "Qwen2.5-7B-Instruct");
  EXPECT_EQ(c->chat.api_key, "k-from-file");
  // Embedding model without its own URL: the chat server and its key.
  EXPECT_EQ(c->embeddings.base_url, "http://gpu1:8000");
  EXPECT_EQ(c->embeddings.model, "bge-m3");
  EXPECT_EQ(c->embeddings.api_key, "k-from-file");
  EXPECT_EQ(c->source, "environment");
}

TEST(LlmConfigTest, EnvironmentErrorsNameTheVariable) {
  auto a = LoadLlmConfig(std::nullopt, Env({{"SCHEDMATE_LLM_BASE_URL", "http://h:1"}}));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("SCHEDMATE_LLM_MODEL"), std::string::npos);
  auto b = LoadLlmConfig(
      std::nullopt, Env({{"SCHEDMATE_LLM_BASE_URL", "gpu1:8000"}, {"SCHEDMATE_LLM_MODEL", "m"}}));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("chat.base_url: expected an http"), std::string::npos);
  auto c = LoadLlmConfig(std::nullopt, Env({{"SCHEDMATE_LLM_BASE_URL", "http://h:1"},
                                            {"SCHEDMATE_LLM_MODEL", "m"},
                                            {"SCHEDMATE_LLM_API_KEY_FILE", "/no/such/key"}}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("SCHEDMATE_LLM_API_KEY_FILE"), std::string::npos);
}

TEST(LlmConfigTest, ParsesEveryKeyOfTheFile) {
  schedmate::testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("chat.key"), "sk-chat\n"));
  const std::string yaml = R"(backend: openai-compatible
chat:
  base_url: http://127.0.0.1:8000/v1
  model: Qwen2.5-7B-Instruct
  api_key_file: chat.key
  connect_timeout_s: 2.5
  timeout_s: 20
embeddings:
  base_url: http://127.0.0.1:8001
  model: bge-m3
  api_key_env: EMBED_KEY
  dimension: 1024
max_retries: 3
max_concurrency: 2
token_budget: 500000
cache_dir: ~/cache/llm
call_log: stderr
probe_timeout_s: 3
retry_seed: 9
)";
  ASSERT_OK(WriteStringToFile(dir.File("llm.yaml"), yaml));
  auto c =
      LoadLlmConfig(dir.File("llm.yaml"), Env({{"EMBED_KEY", "sk-embed"}, {"HOME", "/home/u"}}));
  ASSERT_OK(c);
  EXPECT_EQ(c->chat.base_url, "http://127.0.0.1:8000/v1");
  EXPECT_EQ(c->chat.api_key, "sk-chat");
  EXPECT_EQ(c->chat.connect_timeout, Duration::Millis(2500));
  EXPECT_EQ(c->chat.timeout, Duration::Seconds(20));
  EXPECT_EQ(c->embeddings.api_key, "sk-embed");
  EXPECT_EQ(c->embeddings.api_key_source, "env EMBED_KEY");
  EXPECT_EQ(c->embedding_dimension, 1024u);
  EXPECT_EQ(c->max_retries, 3);
  EXPECT_EQ(c->max_concurrency, 2);
  EXPECT_EQ(c->token_budget, 500000);
  EXPECT_EQ(c->cache_dir, "/home/u/cache/llm");
  EXPECT_EQ(c->call_log, "stderr");
  EXPECT_EQ(c->probe_timeout, Duration::Seconds(3));
  EXPECT_EQ(c->retry_seed, 9u);
  EXPECT_EQ(c->source, "file " + dir.File("llm.yaml"));
}

TEST(LlmConfigTest, FileWinsAndEnvironmentFillsTheRest) {
  schedmate::testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("llm.yaml"), "chat:\n  model: from-file\n"));
  auto c = LoadLlmConfig(dir.File("llm.yaml"), Env({{"SCHEDMATE_LLM_BASE_URL", "http://env:1"},
                                                    {"SCHEDMATE_LLM_MODEL", "from-env"},
                                                    {"SCHEDMATE_LLM_API_KEY", "k"}}));
  ASSERT_OK(c);
  EXPECT_EQ(c->chat.model, "from-file");
  EXPECT_EQ(c->chat.base_url, "http://env:1");
  EXPECT_EQ(c->chat.api_key, "k");
  EXPECT_EQ(c->source, "file " + dir.File("llm.yaml") + " + environment");
}

TEST(LlmConfigTest, ConfigFileFromTheEnvironmentAndBackendNone) {
  schedmate::testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("off.yaml"),
                              "backend: none\nchat:\n  base_url: http://h:1\n  model: m\n"));
  auto c = LoadLlmConfig(std::nullopt, Env({{"SCHEDMATE_LLM_CONFIG", dir.File("off.yaml")}}));
  ASSERT_OK(c);
  EXPECT_EQ(c->backend, "none");
  EXPECT_FALSE(c->chat_configured());
}

TEST(LlmConfigTest, FileErrorsNameFileLineAndKey) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* error;
  };
  const Case cases[] = {
      {"unknown top key", "chat:\n  model: m\nretries: 3\n", "llm.yaml:3: retries: unknown key"},
      {"unknown chat key", "chat:\n  base_url: http://h:1\n  modle: m\n",
       "llm.yaml:3: chat.modle: unknown key"},
      {"bad timeout", "chat:\n  base_url: http://h:1\n  model: m\n  timeout_s: soon\n",
       "llm.yaml:4: chat.timeout_s: expected a number of seconds"},
      {"negative timeout", "chat:\n  timeout_s: -1\n", "chat.timeout_s: expected a number"},
      {"bad url", "chat:\n  base_url: localhost:8000\n",
       "llm.yaml:2: chat.base_url: expected an http"},
      {"bad backend", "backend: openai\n",
       "llm.yaml:1: backend: expected openai-compatible or none"},
      {"two key sources", "chat:\n  api_key: a\n  api_key_file: f\n", "at most one of api_key"},
      {"missing key env", "chat:\n  api_key_env: NOPE_NOT_SET\n", "NOPE_NOT_SET is not set"},
      {"missing key file", "chat:\n  api_key_file: /no/such/file\n",
       "chat.api_key_file: cannot read"},
      {"concurrency range", "max_concurrency: 0\n",
       "max_concurrency: expected an integer in [1, 256]"},
      {"dimension on chat", "chat:\n  dimension: 3\n", "chat.dimension: unknown key"},
      {"model without url", "chat:\n  model: m\n",
       "chat.base_url: a model is set but no server URL"},
      {"not a mapping", "- a\n- b\n", "expected a mapping"},
      {"bad yaml", "chat: [unclosed\n", "not valid YAML"},
  };
  schedmate::testing::TempDir dir;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_OK(WriteStringToFile(dir.File("llm.yaml"), c.yaml));
    auto r = LoadLlmConfig(dir.File("llm.yaml"), Env({}));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.error), std::string::npos) << r.status().message();
  }
  auto missing = LoadLlmConfig(dir.File("absent.yaml"), Env({}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot read LLM config"), std::string::npos);
}

TEST(LlmConfigTest, TheExampleConfigParses) {
  auto c = LoadLlmConfig(schedmate::testing::SourceDir() + "/config/llm.example.yaml",
                         Env({{"SCHEDMATE_LLM_API_KEY", "x"}, {"HOME", "/home/u"}}));
  ASSERT_OK(c);
  EXPECT_TRUE(c->chat_configured());
}

}  // namespace
}  // namespace schedmate::llm
