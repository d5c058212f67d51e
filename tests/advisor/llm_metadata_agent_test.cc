// The advisor's LLM engine against the scripted OpenAI-compatible server: the tool-calling agent,
// path confinement, bounds, the merge rule, fallback reasons and the server embedder adapter.
#include "advisor/llm_metadata_agent.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "advisor/builtin_extractor.h"
#include "core/file_util.h"
#include "llm/engine.h"
#include "llm/llm_setup.h"
#include "testing/llm/fake_chat_client.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::advisor {
namespace {

using nlohmann::json;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;
using schedmate::testing::TempDir;

std::unique_ptr<llm::LlmSetup> MakeSetup(const std::string& base_url,
                                         Duration timeout = Duration::Seconds(5)) {
  llm::LlmConfig c;
  c.chat.base_url = base_url;
  c.chat.model = "scripted-model";
  c.chat.timeout = timeout;
  c.embeddings.base_url = base_url;
  c.embeddings.model = "scripted-embed";
  c.max_retries = 2;
  llm::LlmSetupDeps deps;
  deps.sleeper = std::make_unique<schedmate::testing::RecordingSleeper>();
  auto s = llm::LlmSetup::Create(std::move(c), std::move(deps));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// A job: a launch script and a program whose argparse defaults the built-in engine reads.
class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(server_.Start());
    job_ = dir_.path() + "/job";
    std::filesystem::create_directories(job_ + "/configs");
    ASSERT_OK(
        WriteStringToFile(job_ + "/train.sh",
                          "#!/bin/bash\n#SBATCH --gres=gpu:4\n"
                          "torchrun --nproc_per_node=4 train.py --batch-size 32 --epochs 10\n"));
    ASSERT_OK(WriteStringToFile(job_ + "/train.py",
                                "import argparse\nimport torch\n"
                                "p = argparse.ArgumentParser()\n"
                                "p.add_argument('--batch-size', type=int, default=8)\n"
                                "p.add_argument('--epochs', type=int, default=1)\n"
                                "p.add_argument('--lr', type=float, default=0.1)\n"
                                "args = p.parse_args()\n"
                                "data = load_corpus('my-private-corpus')\n"));
    ASSERT_OK(WriteStringToFile(job_ + "/configs/extra.yaml", "warmup: 5\n"));
    ASSERT_OK(WriteStringToFile(dir_.path() + "/secret.txt", "TOP-SECRET-TOKEN\n"));
    auto b = BuiltinMetadataExtractor().Extract({.path = job_ + "/train.sh", .root = job_});
    ASSERT_OK(b);
    builtin_ = *b;
  }

  // The final answer: every field null except those given.
  static std::string Answer(const json& set) {
    json a = json::object();
    for (std::string_view f : kMetadataFields) a[std::string(f)] = nullptr;
    for (auto it = set.begin(); it != set.end(); ++it) a[it.key()] = it.value();
    return a.dump();
  }

  JobSource Source() const { return {.path = job_ + "/train.sh", .root = job_}; }

  ScriptedChatServer server_;
  TempDir dir_;
  std::string job_;
  JobMetadata builtin_;
};

TEST_F(AgentTest, TreeThenReadThenAnswerMergesWithBuiltinWinningConflicts) {
  // The built-in engine read the batch size from the command line, with file:line provenance.
  ASSERT_TRUE(builtin_.Has("per_device_batch_size"));
  const json builtin_bs = builtin_.values.at("per_device_batch_size");
  ASSERT_NE(builtin_.sources.at("per_device_batch_size").find(':'), std::string::npos);
  ASSERT_FALSE(builtin_.Has("dataset"));

  server_.EnqueueChat(ScriptedReply::ToolCalls({{"c1", "file_tree", "{}"}}));
  server_.EnqueueChat(ScriptedReply::ToolCalls({{"c2", "file_read", R"({"path":"train.py"})"}}));
  server_.EnqueueChat(ScriptedReply::Text(Answer({{"per_device_batch_size", 64},
                                                  {"dataset", "my-private-corpus"},
                                                  {"framework", "pytorch"}})));
  auto setup = MakeSetup(server_.base_url());
  LlmMetadataAgent agent(setup->chat());
  auto merged = agent.Extract(Source(), builtin_);
  ASSERT_OK(merged);

  EXPECT_EQ(merged->values.at("per_device_batch_size"), builtin_bs);  // built-in wins
  EXPECT_EQ(merged->sources.at("per_device_batch_size"),
            builtin_.sources.at("per_device_batch_size"));
  EXPECT_EQ(merged->values.at("dataset"), "my-private-corpus");  // the LLM fills the gap
  EXPECT_EQ(merged->sources.at("dataset"), "llm");
  bool noted = false;
  for (const auto& n : merged->notes)
    noted |= n.find("llm disagrees on per_device_batch_size") == 0;
  EXPECT_TRUE(noted);
  EXPECT_EQ(agent.stats().steps, 3);
  EXPECT_EQ(agent.stats().tool_calls, 2);
  EXPECT_EQ(agent.stats().files_read, std::vector<std::string>{"train.py"});

  // What the model saw: the tree listing, then the numbered file.
  const auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 3u);
  const json& msgs2 = reqs[1].json["messages"];
  const std::string tree = msgs2.back()["content"];
  EXPECT_NE(tree.find("train.py"), std::string::npos);
  EXPECT_NE(tree.find("configs/"), std::string::npos);
  EXPECT_NE(tree.find("configs/extra.yaml"), std::string::npos);
  EXPECT_EQ(tree.find("secret"), std::string::npos);
  const std::string file = reqs[2].json["messages"].back()["content"];
  EXPECT_NE(file.find("    8: data = load_corpus('my-private-corpus')"), std::string::npos);
  ASSERT_TRUE(reqs[0].json.contains("tools"));
  EXPECT_EQ(reqs[0].json["tools"].size(), 2u);
  // The system prompt comes from config/prompts/advisor_metadata.txt.
  EXPECT_NE(reqs[0].json["messages"][0]["content"].get<std::string>().find("file_tree lists"),
            std::string::npos);
}

TEST_F(AgentTest, PreferLlmLetsTheModelWin) {
  server_.EnqueueChat(ScriptedReply::Text(Answer({{"per_device_batch_size", "64"}})));
  auto setup = MakeSetup(server_.base_url());
  LlmAgentOptions o;
  o.prefer = MergePreference::kLlm;
  LlmMetadataAgent agent(setup->chat(), o);
  auto merged = agent.Extract(Source(), builtin_);
  ASSERT_OK(merged);
  EXPECT_EQ(merged->values.at("per_device_batch_size"), 64);  // numeric string normalised
  EXPECT_EQ(merged->sources.at("per_device_batch_size"), "llm");
}

TEST_F(AgentTest, PathTraversalIsRefused) {
  std::filesystem::create_symlink(dir_.path() + "/secret.txt", job_ + "/link.txt");
  server_.EnqueueChat(
      ScriptedReply::ToolCalls({{"a", "file_read", R"({"path":"../secret.txt"})"},
                                {"b", "file_read", R"({"path":"/etc/passwd"})"},
                                {"c", "file_read", R"({"path":"link.txt"})"},
                                {"d", "file_tree", R"({"path":"configs/../.."})"}}));
  server_.EnqueueChat(ScriptedReply::Text(Answer({})));
  auto setup = MakeSetup(server_.base_url());
  LlmMetadataAgent agent(setup->chat());
  auto merged = agent.Extract(Source(), builtin_);
  ASSERT_OK(merged);
  EXPECT_EQ(agent.stats().refused_paths, 4);
  EXPECT_TRUE(agent.stats().files_read.empty());
  const json msgs = server_.requests()[1].json["messages"];
  int refused = 0;
  for (const json& m : msgs) {
    if (m["role"] != "tool") continue;
    const std::string c = m["content"];
    EXPECT_EQ(c.find("TOP-SECRET"), std::string::npos);
    EXPECT_EQ(c.find("root:"), std::string::npos);
    refused +=
        c.rfind("error: ", 0) == 0 && (c.find("outside the job directory") != std::string::npos ||
                                       c.find("is absolute") != std::string::npos);
  }
  EXPECT_EQ(refused, 4);
}

TEST(ConfinedPathTest, InsideOutsideMissing) {
  TempDir d;
  ASSERT_OK(WriteStringToFile(d.File("a.txt"), "x"));
  EXPECT_OK(ConfinedPath(d.path(), "a.txt"));
  EXPECT_OK(ConfinedPath(d.path(), "./a.txt"));
  EXPECT_OK(ConfinedPath(d.path(), ""));  // the directory itself
  EXPECT_EQ(ConfinedPath(d.path(), "../x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ConfinedPath(d.path(), "/tmp").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ConfinedPath(d.path(), "nope.txt").status().code(), StatusCode::kNotFound);
}

TEST_F(AgentTest, NeverEndingToolLoopIsBoundedAndFallsBack) {
  // A model that keeps asking for the next page forever: different arguments each time.
  int n = 0;
  server_.SetChatHandler([&n](const json&) {
    ++n;
    return ScriptedReply::ToolCalls(
        {{"c" + std::to_string(n), "file_read",
          R"({"path":"train.py","start_line":)" + std::to_string(n) + "}"}});
  });
  auto setup = MakeSetup(server_.base_url());
  LlmAgentOptions o;
  o.limits.max_steps = 5;
  LlmMetadataAgent agent(setup->chat(), o);
  auto r = agent.Extract(Source(), builtin_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 5u);
  EXPECT_EQ(llm::FallbackReason(r.status()), "builtin (llm unavailable: tool loop did not end)");
}

TEST_F(AgentTest, RepeatedIdenticalCallsStopTheLoop) {
  server_.SetChatHandler([](const json&) {
    return ScriptedReply::ToolCalls({{"x", "file_tree", "{}"}});
  });
  auto setup = MakeSetup(server_.base_url());
  LlmMetadataAgent agent(setup->chat());
  auto r = agent.Extract(Source(), builtin_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 3u);  // max_repeats 2
  EXPECT_EQ(llm::FallbackReason(r.status()), "builtin (llm unavailable: tool loop)");
}

TEST_F(AgentTest, MalformedAndSchemaViolatingAnswersAreRejected) {
  // Cut-off JSON, then (after the correction turn) a schema violation, for every step.
  int n = 0;
  server_.SetChatHandler([&n](const json&) {
    return ScriptedReply::Text(++n % 2 == 1 ? "{\"framework\": \"pytorch\""
                                            : R"({"framework": 3})");
  });
  auto setup = MakeSetup(server_.base_url());
  LlmMetadataAgent agent(setup->chat());
  auto r = agent.Extract(Source(), builtin_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(llm::FallbackReason(r.status()).rfind("builtin (llm answer rejected: ", 0), 0u)
      << llm::FallbackReason(r.status());
}

TEST_F(AgentTest, ServerErrorsAreRetriedThenFallBack) {
  for (int i = 0; i < 3; ++i) server_.EnqueueChat(ScriptedReply::Error(500, "boom"));
  auto setup = MakeSetup(server_.base_url());
  LlmMetadataAgent agent(setup->chat());
  auto r = agent.Extract(Source(), builtin_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 3u);  // 1 + 2 retries
  EXPECT_EQ(llm::FallbackReason(r.status()), "builtin (llm unavailable: HTTP 500)");
}

TEST_F(AgentTest, TimeoutFallsBack) {
  server_.SetChatHandler(
      [](const json&) { return ScriptedReply::Text("{}").WithDelay(Duration::Seconds(3)); });
  auto setup = MakeSetup(server_.base_url(), Duration::Millis(300));
  LlmMetadataAgent agent(setup->chat());
  auto r = agent.Extract(Source(), builtin_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(llm::FallbackReason(r.status()).rfind("builtin (llm unavailable: timeout after", 0), 0u)
      << llm::FallbackReason(r.status());
}

TEST(MergeMetadataTest, DefaultsLoseToTheLlmAgreementKeepsProvenance) {
  JobMetadata b;
  b.values = {{"optimizer", "sgd"}, {"epochs", 10}, {"precision", "fp32"}};
  b.sources = {{"optimizer", "default: torch"}, {"epochs", "train.sh:3"}, {"precision", "x.py:2"}};
  JobMetadata l;
  l.values = {{"optimizer", "adamw"}, {"epochs", 10}, {"model", "resnet50"}};
  l.sources = {{"optimizer", "llm"}, {"epochs", "llm"}, {"model", "llm"}};
  JobMetadata m = MergeMetadata(b, l, MergePreference::kBuiltin);
  EXPECT_EQ(m.values.at("optimizer"), "adamw");
  EXPECT_EQ(m.sources.at("optimizer"), "llm");
  EXPECT_EQ(m.sources.at("epochs"), "train.sh:3");
  EXPECT_EQ(m.values.at("precision"), "fp32");
  EXPECT_EQ(m.sources.at("model"), "llm");
  EXPECT_EQ(m.notes.size(), 1u);  // only the optimizer disagreed
}

TEST(MetadataAnswerTest, SchemaAndNormalisation) {
  json a = json::object();
  for (std::string_view f : kMetadataFields) a[std::string(f)] = nullptr;
  a["num_gpus"] = 8.0;
  a["learning_rate"] = "3e-4";
  a["model"] = "  ";
  a["launcher"] = "torchrun";
  JobMetadata m = MetadataFromAnswer(a);
  EXPECT_EQ(m.values.at("num_gpus"), 8);
  EXPECT_TRUE(m.values.at("num_gpus").is_number_integer());
  EXPECT_DOUBLE_EQ(m.values.at("learning_rate").get<double>(), 3e-4);
  EXPECT_FALSE(m.Has("model"));
  EXPECT_EQ(m.values.at("launcher"), "torchrun");
  EXPECT_EQ(MetadataAnswerSchema()["required"].size(), kMetadataFields.size());
}

}  // namespace
}  // namespace schedmate::advisor
