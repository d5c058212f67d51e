// The tracker's LLM engine against the scripted OpenAI-compatible server: batching, newest-first
// order, early stop (request counts), mapping into ProgressRecord, rejected answers.
#include "tracker/llm_metric_extractor.h"

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "llm/engine.h"
#include "llm/llm_setup.h"
#include "testing/llm/fake_chat_client.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::tracker {
namespace {

using nlohmann::json;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;

std::unique_ptr<llm::LlmSetup> MakeSetup(const std::string& base_url) {
  llm::LlmConfig c;
  c.chat.base_url = base_url;
  c.chat.model = "scripted-model";
  c.chat.timeout = Duration::Seconds(5);
  llm::LlmSetupDeps deps;
  deps.sleeper = std::make_unique<schedmate::testing::RecordingSleeper>();
  auto s = llm::LlmSetup::Create(std::move(c), std::move(deps));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::vector<ProgressRecord> Candidates(int n) {
  std::vector<ProgressRecord> out;
  for (int i = 1; i <= n; ++i) {
    ProgressRecord r;
    r.line_no = 10 * i;
    r.line = "step " + std::to_string(i) + " loss " + std::to_string(3.0 - 0.01 * i);
    r.segment = r.line;
    r.format = "key: value";
    out.push_back(r);
  }
  return out;
}

// The line numbers of a request's batch, in the order sent.
std::vector<int64_t> BatchLines(const json& request) {
  std::string user = request["messages"][1]["content"];
  json lines = json::parse(user.substr(user.find('\n') + 1));
  std::vector<int64_t> out;
  for (const json& l : lines) out.push_back(l["line_no"]);
  return out;
}

// Answers like a model: lines with line_no <= `training_upto` are training records.
ScriptedReply Answer(const json& request, int64_t training_upto) {
  json records = json::array();
  for (int64_t no : BatchLines(request)) {
    const bool training = no <= training_upto;
    records.push_back({{"line_no", no},
                       {"training", training},
                       {"step", training ? json(no / 10) : json(nullptr)},
                       {"total_steps", 100},
                       {"loss", training ? json(1.5) : json(nullptr)},
                       {"throughput", 120.5},
                       {"throughput_unit", "samples/s"}});
  }
  return ScriptedReply::Text(json{{"records", records}}.dump());
}

TEST(LlmMetricExtractorTest, NewestFirstBatchesStopAtTheFirstTrainingRecord) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  // The newest 20 lines (200..400 step 10) are evaluation output; training ends at line 190.
  server.SetChatHandler([](const json& req) { return Answer(req, 190); });
  auto setup = MakeSetup(server.base_url());
  LlmMetricOptions o;
  o.batch_lines = 8;
  LlmMetricExtractor ex(setup->chat(), o);
  const auto cands = Candidates(40);  // lines 10..400
  auto r = ex.FindLatest(cands);
  ASSERT_OK(r);
  // Batches: 400..330, 320..250, 240..170 -> the third holds line 190: stop there.
  EXPECT_EQ(r->requests, 3);
  EXPECT_EQ(server.CountRequests("/v1/chat/completions"), 3u);
  EXPECT_EQ(r->lines_sent, 24u);
  const auto reqs = server.requests();
  const std::vector<int64_t> first = BatchLines(reqs[0].json);
  ASSERT_EQ(first.size(), 8u);
  EXPECT_EQ(first.front(), 400);
  EXPECT_EQ(first.back(), 330);
  EXPECT_TRUE(std::is_sorted(first.rbegin(), first.rend()));
  EXPECT_EQ(BatchLines(reqs[2].json).front(), 240);
  ASSERT_TRUE(r->latest);
  EXPECT_EQ(r->latest->line_no, 190);
  EXPECT_EQ(r->latest->format, "key: value");  // identity from the built-in record
  EXPECT_EQ(r->latest->v.step, 19);
  EXPECT_EQ(r->latest->v.total_steps, 100);
  EXPECT_DOUBLE_EQ(*r->latest->v.loss, 1.5);
  ASSERT_TRUE(r->latest->v.throughput);
  EXPECT_EQ(r->latest->v.throughput->unit, "samples/s");
  EXPECT_NEAR(*r->latest->v.percent, 19.0, 1e-9);
  // The request carries the schema and the prompt from config/prompts/tracker_metrics.txt.
  EXPECT_EQ(reqs[0].json["response_format"]["type"], "json_schema");
  EXPECT_NE(reqs[0].json["messages"][0]["content"].get<std::string>().find("TRAINING progress"),
            std::string::npos);
}

TEST(LlmMetricExtractorTest, HealthyLogNeedsOneRequest) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.SetChatHandler([](const json& req) { return Answer(req, 1 << 30); });
  auto setup = MakeSetup(server.base_url());
  LlmMetricExtractor ex(setup->chat());
  const auto cands = Candidates(500);
  auto r = ex.FindLatest(cands);
  ASSERT_OK(r);
  EXPECT_EQ(r->requests, 1);
  EXPECT_EQ(r->lines_sent, 16u);
  EXPECT_EQ(r->latest->line_no, 5000);
}

TEST(LlmMetricExtractorTest, NoTrainingRecordWithinTheBoundIsRejected) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.SetChatHandler([](const json& req) { return Answer(req, 0); });
  auto setup = MakeSetup(server.base_url());
  LlmMetricOptions o;
  o.batch_lines = 4;
  o.max_requests = 3;
  LlmMetricExtractor ex(setup->chat(), o);
  const auto cands = Candidates(100);
  auto r = ex.FindLatest(cands);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server.CountRequests("/v1/chat/completions"), 3u);
  EXPECT_EQ(llm::FallbackReason(r.status()),
            "builtin (llm answer rejected: no training record in the model's answers)");
}

TEST(LlmMetricExtractorTest, InventedLineNumbersAreIgnored) {
  schedmate::testing::FakeChatClient fake;
  fake.EnqueueText(R"({"records":[{"line_no":999,"training":true,"step":5,"loss":1.0},
                                   {"line_no":20,"training":true,"step":2,"loss":2.0}]})");
  LlmMetricExtractor ex(fake);
  const auto cands = Candidates(2);
  auto r = ex.FindLatest(cands);
  ASSERT_OK(r);
  EXPECT_EQ(r->ignored_entries, 1);
  EXPECT_EQ(r->latest->line_no, 20);
}

TEST(LlmMetricExtractorTest, MalformedAnswersAndServerErrorsFail) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.EnqueueChat(ScriptedReply::Text("records: none"));
  server.EnqueueChat(ScriptedReply::Text(R"({"records":[{"line_no":"x"}]})"));
  auto setup = MakeSetup(server.base_url());
  LlmMetricExtractor ex(setup->chat());
  const auto cands = Candidates(3);
  auto bad = ex.FindLatest(cands);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(llm::FallbackReason(bad.status()).rfind("builtin (llm answer rejected: ", 0), 0u);

  for (int i = 0; i < 3; ++i) server.EnqueueChat(ScriptedReply::Error(503, "overloaded"));
  auto down = ex.FindLatest(cands);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(llm::FallbackReason(down.status()), "builtin (llm unavailable: HTTP 503)");
  EXPECT_EQ(ex.FindLatest({}).status().code(), StatusCode::kNotFound);
}

TEST(ScanLogWithLlmTest, BuiltinPassFeedsTheModelAndKeepsSignals) {
  schedmate::testing::TempDir dir;
  std::string log;
  for (int i = 1; i <= 30; ++i) {
    log += "epoch 1 step " + std::to_string(i) + "/30 loss=" + std::to_string(2.0 - 0.01 * i) +
           " lr=0.001\n";
  }
  log += "done\n";
  ASSERT_OK(WriteStringToFile(dir.File("train.log"), log));
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.SetChatHandler([](const json& req) {
    json records = json::array();
    for (int64_t no : BatchLines(req)) {
      records.push_back({{"line_no", no}, {"training", true}, {"step", no}, {"loss", 0.5}});
    }
    return ScriptedReply::Text(json{{"records", records}}.dump());
  });
  auto setup = MakeSetup(server.base_url());
  auto out = ScanLogWithLlm(setup->chat(), dir.File("train.log"), ScanOptions{});
  ASSERT_OK(out);
  ASSERT_OK(out->llm_status);
  EXPECT_EQ(out->requests, 1);
  ASSERT_TRUE(out->scan.latest);
  EXPECT_EQ(out->scan.latest->line_no, 30);
  EXPECT_DOUBLE_EQ(*out->scan.latest->v.loss, 0.5);  // the model's value, not the log's 1.7
  // Only built-in progress lines were sent: never the "done" line.
  for (const auto& r : server.requests()) {
    EXPECT_EQ(r.json["messages"][1]["content"].get<std::string>().find("done"), std::string::npos);
  }

  // A dead server: the built-in result stays, the error is reported.
  ScriptedChatServer dead;
  ASSERT_OK(dead.Start());
  const std::string url = dead.base_url();
  dead.Stop();
  auto setup2 = MakeSetup(url);
  auto fb = ScanLogWithLlm(setup2->chat(), dir.File("train.log"), ScanOptions{});
  ASSERT_OK(fb);
  EXPECT_FALSE(fb->llm_status.ok());
  ASSERT_TRUE(fb->scan.latest);
  EXPECT_EQ(fb->scan.latest->v.step, 30);
  EXPECT_EQ(llm::FallbackReason(fb->llm_status).rfind("builtin (llm unavailable: ", 0), 0u)
      << llm::FallbackReason(fb->llm_status);
}

}  // namespace
}  // namespace schedmate::tracker
