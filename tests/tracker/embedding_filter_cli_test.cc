// `schedmate logs metrics --filter embeddings` end to end (the built binary against the scripted
// server's /v1/embeddings, a dead port, no configuration), and the shared-corpus score of the
// filter over the hashing embedder.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "corpus_score.h"
#include "testing/llm/llm_cli_env.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using nlohmann::json;
using testing::LlmCliEnv;
using testing::RunSchedmateWithLlm;
using testing::ScriptedChatServer;
using testing::ScriptedReply;
using testing::ShellQuote;

// --- the CLI ---------------------------------------------------------------------------------

class FilterCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(server_.Start());
    std::string log;
    for (int i = 1; i <= 50; ++i) {
      log += "epoch 1 step " + std::to_string(i) + "/50 loss=" + std::to_string(3.0 - 0.02 * i) +
             " lr=0.0003\n";
      if (i % 10 == 0) log += "Saving checkpoint to out/ckpt-" + std::to_string(i) + "\n";
    }
    log += "training finished\n";
    path_ = dir_.File("train.log");
    ASSERT_OK(WriteStringToFile(path_, log));
  }
  LlmCliEnv EmbedEnv() const { return LlmCliEnv{.embed_url = server_.base_url()}; }
  std::string Args(const std::string& extra = "") const {
    return "logs metrics " + ShellQuote(path_) + " --json --filter embeddings" + extra;
  }
  static json Parse(const testing::CommandResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json();
  }
  ScriptedChatServer server_;
  testing::TempDir dir_;
  std::string path_;
};

TEST_F(FilterCliTest, ServerEmbeddingsLabelTemplatesInOneRequest) {
  json j = Parse(RunSchedmateWithLlm(EmbedEnv(), Args(" --filter-explain")));
  EXPECT_EQ(j["filter"], "embeddings (scripted-embed)");
  EXPECT_EQ(j["engine"], "builtin");
  EXPECT_EQ(j["found"], true);
  EXPECT_EQ(j["step"], 50);  // the built-in is sure about the step lines: they stay progress
  EXPECT_EQ(j["filter_stats"]["requests"], 1);
  EXPECT_EQ(server_.CountRequests("/v1/embeddings"), 1u);
  EXPECT_EQ(j["filter_stats"]["dimension"], 8);
  EXPECT_GE(j["filter_stats"]["templates_embedded"].get<int>(), 1);
  ASSERT_TRUE(j["filter_templates"].is_array());
  EXPECT_FALSE(j["filter_templates"].empty());
  // Templates, not lines: the exemplars plus a few shapes, not the log's 56 lines.
  const json input = server_.requests().back().json["input"];
  EXPECT_EQ(input.size(), j["filter_stats"]["texts_embedded"].get<size_t>());
  EXPECT_LE(j["filter_stats"]["templates_embedded"].get<int>(), 5);
}

TEST_F(FilterCliTest, BatchOptionSplitsRequests) {
  json j = Parse(RunSchedmateWithLlm(EmbedEnv(), Args(" --filter-batch 10")));
  EXPECT_EQ(j["filter"], "embeddings (scripted-embed)");
  const int requests = j["filter_stats"]["requests"];
  EXPECT_EQ(static_cast<size_t>(requests), server_.CountRequests("/v1/embeddings"));
  const int texts = j["filter_stats"]["texts_embedded"];
  EXPECT_EQ(requests, (texts + 9) / 10);
  for (const auto& r : server_.requests()) EXPECT_LE(r.json["input"].size(), 10u);
}

TEST_F(FilterCliTest, WrongDimensionFallsBackWithTheReason) {
  // First request (10 texts) answered with 4-dimensional vectors, the next ones get 8.
  server_.EnqueueEmbeddings(
      ScriptedReply::Embeddings(std::vector<std::vector<float>>(10, {1, 0, 0, 0})));
  json j = Parse(RunSchedmateWithLlm(EmbedEnv(), Args(" --filter-batch 10")));
  const std::string f = j["filter"];
  EXPECT_EQ(f.rfind("builtin (embeddings answer rejected: ", 0), 0u) << f;
  EXPECT_NE(f.find("dimension"), std::string::npos) << f;
  EXPECT_EQ(j["step"], 50);
  EXPECT_EQ(j["engine"], "builtin");
}

TEST_F(FilterCliTest, ServerErrorDeadPortAndNoConfigurationFallBack) {
  for (int i = 0; i < 3; ++i) server_.EnqueueEmbeddings(ScriptedReply::Error(500, "boom"));
  auto e = RunSchedmateWithLlm(EmbedEnv(), Args());
  json je = Parse(e);
  EXPECT_EQ(je["filter"], "builtin (embeddings unavailable: HTTP 500)");
  EXPECT_EQ(je["step"], 50);
  EXPECT_NE(e.err.find("the embeddings filter failed"), std::string::npos) << e.err;

  const std::string url = server_.base_url();
  server_.Stop();
  json jd = Parse(RunSchedmateWithLlm(LlmCliEnv{.embed_url = url}, Args()));
  EXPECT_EQ(jd["filter"], "builtin (embeddings unavailable: connection refused)");
  EXPECT_EQ(jd["found"], true);
  EXPECT_EQ(jd["step"], 50);

  json jn = Parse(RunSchedmateWithLlm(LlmCliEnv{}, Args()));
  EXPECT_EQ(jn["filter"], "builtin (embeddings unavailable: not configured)");
  EXPECT_EQ(jn["step"], 50);
}

TEST_F(FilterCliTest, EmbeddingsFilterFeedsTheLlmStage) {
  server_.SetChatHandler([](const json& req) {
    const std::string user = req["messages"][1]["content"];
    json lines = json::parse(user.substr(user.find('\n') + 1));
    json records = json::array();
    for (const json& l : lines) {
      const std::string text = l["text"];
      records.push_back({{"line_no", l["line_no"]},
                         {"training", text.find("step") != std::string::npos},
                         {"step", l["line_no"]},
                         {"total_steps", 50},
                         {"loss", 0.25}});
    }
    return ScriptedReply::Text(json{{"records", records}}.dump());
  });
  LlmCliEnv env{.chat_url = server_.base_url(), .embed_url = server_.base_url()};
  json j = Parse(RunSchedmateWithLlm(env, Args(" --engine llm")));
  EXPECT_EQ(j["engine"], "llm (scripted-model)");
  EXPECT_EQ(j["filter"], "embeddings (scripted-embed)");
  EXPECT_EQ(j["line_no"], 54);  // "epoch 1 step 50/50 ..." (after four checkpoint lines)
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), 0.25);
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 1u);
  EXPECT_EQ(server_.CountRequests("/v1/embeddings"), 1u);
}

TEST_F(FilterCliTest, HashingEmbedderNeedsNoServerAndDefaultIsUnchanged) {
  json h = Parse(RunSchedmateWithLlm(LlmCliEnv{}, Args(" --filter-embedder hashing")));
  EXPECT_EQ(h["filter"], "embeddings (hashing)");
  EXPECT_EQ(h["filter_stats"]["dimension"], 4096);
  EXPECT_EQ(h["step"], 50);
  json d = Parse(RunSchedmateWithLlm(EmbedEnv(), "logs metrics " + ShellQuote(path_) + " --json"));
  EXPECT_EQ(d["filter"], "builtin");
  EXPECT_FALSE(d.contains("filter_stats"));
  EXPECT_EQ(server_.CountRequests("/v1/embeddings"), 0u);
}

TEST_F(FilterCliTest, UsageErrors) {
  auto f = RunSchedmateWithLlm(LlmCliEnv{}, Args(" --follow --idle-exit 1"));
  EXPECT_EQ(f.exit_code, 2) << f.err;
  EXPECT_NE(f.err.find("--follow"), std::string::npos) << f.err;
  auto b = RunSchedmateWithLlm(LlmCliEnv{}, "logs metrics " + ShellQuote(path_) + " --filter x");
  EXPECT_EQ(b.exit_code, 2);
  const std::string ex = dir_.File("ex.txt");
  ASSERT_OK(WriteStringToFile(ex, "progress step 1 loss 2\nmaybe something\n"));
  auto e = RunSchedmateWithLlm(LlmCliEnv{},
                               Args(" --filter-embedder hashing --exemplars " + ShellQuote(ex)));
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.err.find(ex + ":2:"), std::string::npos) << e.err;
}

TEST_F(FilterCliTest, ExtraExemplarsAreUsed) {
  const std::string ex = dir_.File("ex.txt");
  ASSERT_OK(WriteStringToFile(ex, "other  gradient accumulation set to 4 micro batches\n"));
  json base = Parse(RunSchedmateWithLlm(LlmCliEnv{}, Args(" --filter-embedder hashing")));
  json more = Parse(RunSchedmateWithLlm(
      LlmCliEnv{}, Args(" --filter-embedder hashing --exemplars " + ShellQuote(ex))));
  EXPECT_EQ(more["filter_stats"]["texts_embedded"].get<int>(),
            base["filter_stats"]["texts_embedded"].get<int>() + 1);
}

TEST(FilterCorpusTest, HashingEmbeddingsFilterScoresAtLeast95Percent) {
  SM_SKIP_WITHOUT_SHARED(corpus, "corpus/training-logs");
  SM_SKIP_WITHOUT_SHARED(scorer, "tools/score_tracker.py");
  const auto score = testing::ScoreBothTrackerCorpora(
      scorer, corpus, "--filter embeddings --filter-embedder hashing");
  ASSERT_GT(score.total, 0);
  EXPECT_GE(score.good * 100, score.total * 95) << score.output;
}

}  // namespace
}  // namespace schedmate
