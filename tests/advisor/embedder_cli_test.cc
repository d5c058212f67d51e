// `--embedder server` and `schedmate history reindex` through the built binary, against the
// scripted OpenAI-compatible server's /v1/embeddings (deterministic vectors), a dead port and no
// configuration.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "store/history_store.h"
#include "testing/llm/llm_cli_env.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using nlohmann::json;
using testing::LlmCliEnv;
using testing::RunSchedmateWithLlm;
using testing::ScriptedChatServer;
using testing::ShellQuote;
using testing::TestDataPath;

class EmbedderCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(server_.Start());
    db_ = dir_.File("history.db");
    auto r = RunSchedmateWithLlm("", "history import " +
                                         ShellQuote(TestDataPath("advisor/tiny_lucid.csv")) +
                                         " --store " + ShellQuote(db_));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    job_ = ShellQuote(TestDataPath("advisor/argparse_job/run.sh"));
  }
  LlmCliEnv Env() const { return LlmCliEnv{.embed_url = server_.base_url()}; }
  LlmCliEnv DeadEnv() const { return LlmCliEnv{.embed_url = dead_url_}; }
  testing::CommandResult Reindex(const LlmCliEnv& env, const std::string& extra = "") {
    return RunSchedmateWithLlm(env, "history reindex --json --store " + ShellQuote(db_) + extra);
  }
  testing::CommandResult Advise(const LlmCliEnv& env, const std::string& extra = "") {
    return RunSchedmateWithLlm(env, "advise " + job_ + " --json --user carol --embedder server " +
                                        "--store " + ShellQuote(db_) + extra);
  }
  // Inputs sent to /v1/embeddings so far, over all requests.
  size_t EmbeddedInputs() const {
    size_t n = 0;
    for (const auto& r : server_.requests()) {
      if (r.path != "/v1/embeddings") continue;
      n += r.json["input"].is_array() ? r.json["input"].size() : 1;
    }
    return n;
  }
  std::unique_ptr<store::SqliteHistoryStore> OpenStore() {
    auto st = store::SqliteHistoryStore::Open(db_);
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    return st.ok() ? std::move(st).value() : nullptr;
  }

  ScriptedChatServer server_;
  testing::TempDir dir_;
  std::string db_, job_;
  std::string dead_url_ = "http://127.0.0.1:9";  // discard port: nothing listens
};

TEST_F(EmbedderCliTest, ReindexStoresOneVectorPerWorkloadAndAdviseSendsOnlyTheQuery) {
  auto r = Reindex(Env(), " --batch 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["embedder"], "server:scripted-embed");
  EXPECT_EQ(j["dimension"], 8);
  EXPECT_EQ(j["jobs"], 8);
  const size_t texts = j["vectors"].get<size_t>();
  EXPECT_EQ(texts, 3u);                // ResNet18/CIFAR-10, ResNet50/ImageNet, BERT/SQuAD
  EXPECT_EQ(EmbeddedInputs(), texts);  // each text sent once
  EXPECT_EQ(server_.CountRequests("/v1/embeddings"), (texts + 1) / 2);  // --batch 2
  EXPECT_EQ(j["requests"], (texts + 1) / 2);
  {
    auto st = OpenStore();
    ASSERT_NE(st, nullptr);
    const store::EmbedderIdentity id{"server:scripted-embed", 8};
    EXPECT_EQ(*st->StoredEmbedder(), std::optional<store::EmbedderIdentity>(id));
    EXPECT_EQ(*st->CountEmbeddings(), 3);  // one per distinct workload text
    auto all = st->ListEmbeddings(id);
    ASSERT_OK(all.status());
    for (const auto& e : *all) {
      EXPECT_EQ(e.vector, ScriptedChatServer::DeterministicEmbedding(e.key, 8)) << e.key;
    }
  }
  // advise reads the stored vectors: one request, one input (the query's workload).
  const size_t before = server_.CountRequests("/v1/embeddings");
  auto a = Advise(Env());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  json aj = json::parse(a.out);
  EXPECT_EQ(aj["embedder"], "server (scripted-embed)");
  EXPECT_FALSE(aj.contains("embedder_note")) << aj["embedder_note"];
  EXPECT_EQ(server_.CountRequests("/v1/embeddings"), before + 1);
  EXPECT_EQ(EmbeddedInputs(), texts + 1);
  EXPECT_NE(aj["estimate"]["tier"], "cold-start");
  // --record stores the advised workload's vector beside the others.
  auto rec = Advise(Env(), " --record");
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  auto st = OpenStore();
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(*st->CountEmbeddings(), 4);
}

TEST_F(EmbedderCliTest, AdviseWithoutStoredVectorsEmbedsTheHistoryAndSaysSo) {
  auto a = Advise(Env());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  json j = json::parse(a.out);
  EXPECT_EQ(j["embedder"], "server (scripted-embed)");
  EXPECT_NE(j["embedder_note"].get<std::string>().find("history reindex"), std::string::npos);
  EXPECT_EQ(EmbeddedInputs(), 4u);  // 3 history texts + the query, in one request
  EXPECT_EQ(server_.CountRequests("/v1/embeddings"), 1u);
}

TEST_F(EmbedderCliTest, DimensionChangeFallsBackToHashingAndReindexRepairs) {
  ASSERT_EQ(Reindex(Env()).exit_code, 0);
  auto hashing = RunSchedmateWithLlm(
      LlmCliEnv{}, "advise " + job_ + " --json --user carol --store " + ShellQuote(db_));
  ASSERT_EQ(hashing.exit_code, 0) << hashing.err;
  server_.SetEmbeddingDimension(16);  // another model behind the same URL
  auto a = Advise(Env());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  json j = json::parse(a.out);
  const std::string label = j["embedder"];
  EXPECT_EQ(label.rfind("hashing (server embeddings rejected: ", 0), 0u) << label;
  EXPECT_NE(label.find("dimension mismatch: expected 8 components"), std::string::npos) << label;
  EXPECT_NE(a.err.find("schedmate: warning: server embeddings failed"), std::string::npos);
  // The answer is the built-in one, and its explanation says why.
  const json builtin = json::parse(hashing.out)["estimate"];
  for (const char* f : {"duration_s", "tier", "neighbours", "low_s", "high_s"}) {
    EXPECT_EQ(j["estimate"][f], builtin[f]) << f;
  }
  EXPECT_NE(j["estimate"]["explanation"].get<std::string>().find(
                "similarity by the hashing embedder (external embedder failed: embedding server: "
                "embedding dimension mismatch"),
            std::string::npos);
  // Reindexing replaces every vector with the new dimension.
  auto r = Reindex(Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["dimension"], 16);
  EXPECT_EQ(json::parse(r.out)["replaced"], "server:scripted-embed");
  auto again = Advise(Env());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json::parse(again.out)["embedder"], "server (scripted-embed)");
}

TEST_F(EmbedderCliTest, DeadServerLeavesTheStoreUnchanged) {
  ASSERT_EQ(Reindex(Env()).exit_code, 0);
  auto r = Reindex(DeadEnv());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("history reindex: embedding failed after 0 of 3 texts"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the store is unchanged"), std::string::npos) << r.err;
  {
    auto st = OpenStore();
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(*st->CountEmbeddings(), 3);
    EXPECT_EQ((*st->StoredEmbedder())->name, "server:scripted-embed");
  }
  auto a = Advise(DeadEnv());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(json::parse(a.out)["embedder"],
            "hashing (server embeddings unavailable: connection refused)");
}

TEST_F(EmbedderCliTest, NotConfiguredAndClear) {
  auto r = Reindex(LlmCliEnv{});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("server embeddings: not configured"), std::string::npos) << r.err;
  auto a = Advise(LlmCliEnv{});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(json::parse(a.out)["embedder"].get<std::string>().rfind(
                "hashing (server embeddings unavailable: not configured", 0),
            0u);
  ASSERT_EQ(Reindex(Env()).exit_code, 0);
  auto c = Reindex(LlmCliEnv{}, " --clear");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(json::parse(c.out)["cleared"], 3);
  auto st = OpenStore();
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(*st->CountEmbeddings(), 0);
  // A missing store is an error naming it; a bad --embedder is a usage error.
  auto missing =
      RunSchedmateWithLlm(Env(), "history reindex --store " + ShellQuote(dir_.File("nope.db")));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find(dir_.File("nope.db")), std::string::npos);
  EXPECT_EQ(RunSchedmateWithLlm(Env(), "advise " + job_ + " --embedder bge").exit_code, 2);
}

TEST_F(EmbedderCliTest, ImportNamesWorkloadsWithoutStoredVectors) {
  ASSERT_EQ(Reindex(Env()).exit_code, 0);
  const std::string more = dir_.File("more.csv");
  ASSERT_OK(WriteStringToFile(
      more,
      "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s,dataset,model,batchsize,amp,"
      "speed,gpu_util,gmem_util,gmem\n"
      "20,dave,vc1,4,16,COMPLETED,7000,600,C4,T5,128,1,0,0,0,0\n"
      "21,alice,vc1,1,4,COMPLETED,7100,100,CIFAR-10,ResNet18,64,1,0,0,0,0\n"));
  auto r = RunSchedmateWithLlm(LlmCliEnv{}, "history import " + ShellQuote(more) +
                                                " --format lucid --store " + ShellQuote(db_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: 1 new workload texts have no stored server:scripted-embed vector"),
            std::string::npos)
      << r.out;
}

TEST_F(EmbedderCliTest, ReplayWithServerEmbeddingsAndADeadServer) {
  const std::string trace = ShellQuote(TestDataPath("advisor/tiny_lucid.csv"));
  auto base = RunSchedmateWithLlm(
      LlmCliEnv{}, "history replay --trace " + trace + " --out " + ShellQuote(dir_.File("h.csv")));
  ASSERT_EQ(base.exit_code, 0) << base.err;
  auto s = RunSchedmateWithLlm(Env(), "history replay --embedder server --trace " + trace +
                                          " --out " + ShellQuote(dir_.File("s.csv")));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.err.find("embedder: server (scripted-embed)"), std::string::npos) << s.err;
  EXPECT_GT(server_.CountRequests("/v1/embeddings"), 0u);
  // A dead server is tried once, then the hashing embedder answers: same predictions as without.
  auto d = RunSchedmateWithLlm(DeadEnv(), "history replay --embedder server --trace " + trace +
                                              " --out " + ShellQuote(dir_.File("d.csv")));
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.err.find("embedder: hashing (server embeddings unavailable: connection refused) "
                       "(1 requests"),
            std::string::npos)
      << d.err;
  EXPECT_EQ(*ReadFileToString(dir_.File("d.csv")), *ReadFileToString(dir_.File("h.csv")));
}

}  // namespace
}  // namespace schedmate
