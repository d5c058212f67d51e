// The API over several clusters (slurm.clusters): one companion per cluster sharing the store
// and the advisor; list filters, the cluster of each item, ambiguous job ids, metric labels.

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api_fixture.h"
#include "service/engines.h"
#include "service/fake_cluster.h"
#include "service/report.h"
#include "testing/test_util.h"

namespace schedmate::api {
namespace {

using nlohmann::json;

class ClustersApiTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    b_store_ = std::move(service::ServiceStore::Attach(*db_, "b").value());
    a_store_ = std::move(service::ServiceStore::Attach(*db_, "a").value());
    a_read_ = std::move(service::ServiceStore::Attach(*read_db_, "a").value());
    b_read_ = std::move(service::ServiceStore::Attach(*read_db_, "b").value());
    b_engines_ = std::move(service::MakeEngines(config_, *history_, false).value());
    shared_ = std::make_unique<service::SynchronizedAdvisor>(*engines_.advisor);
    // Cluster a: job 3 running on a1, job 4 pending. Cluster b: job 3 running on b1, job 7
    // pending (job ids repeat across clusters).
    cluster_.AddNode("a1", 8);
    b_cluster_.AddNode("b1", 4);
    Job(cluster_, "3", "RUNNING", "a1");
    Job(cluster_, "4", "PENDING", "");
    Job(b_cluster_, "3", "RUNNING", "b1");
    Job(b_cluster_, "7", "PENDING", "");
    cluster_.Render();
    b_cluster_.Render();
  }
  void Job(service::testing::FakeCluster& c, const std::string& id, const std::string& state,
           const std::string& node) {
    auto& j = c.Job(id);
    j.id = id;
    j.state = state;
    j.node = node;
    j.gpus_per_node = 4;
    if (state == "RUNNING") j.start = clock_.Now().seconds() - 60;
    if (state == "PENDING") j.reason = "Resources";
  }
  std::unique_ptr<service::Companion> MakeCompanion(const std::string& name,
                                                    slurm::SlurmBackend& backend,
                                                    service::ServiceStore& store,
                                                    service::Engines& engines) {
    service::ServiceConfig cfg = config_;
    cfg.cluster_name = name;
    auto c = std::make_unique<service::Companion>(
        service::CompanionDeps{backend, *history_, store, *shared_, *engines.tracker,
                               *engines.diagnoser, clock_},
        cfg);
    EXPECT_OK(c->Load());
    EXPECT_OK(c->Tick());
    return c;
  }
  void Start() {
    backend_ = std::make_unique<slurm::SlurmBackend>(fake_, slurm::SlurmBackendOptions{});
    b_backend_ = std::make_unique<slurm::SlurmBackend>(b_fake_, slurm::SlurmBackendOptions{});
    a_ = MakeCompanion("a", *backend_, *a_store_, engines_);
    b_ = MakeCompanion("b", *b_backend_, *b_store_, b_engines_);
    std::vector<ApiCluster> clusters = {
        {{.name = "a", .slurm_conf = "/etc/slurm-a/slurm.conf"}, a_.get(), a_read_.get()},
        {{.name = "b", .cluster = "gpu-b"}, b_.get(), b_read_.get()}};
    server_ = std::make_unique<ApiServer>(std::move(clusters), *read_history_, "t0k",
                                          /*label_clusters=*/true);
    ASSERT_OK(server_->Start("127.0.0.1", 0));
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  // "<cluster>:<job id>" of each job in a /v1/jobs answer, in order.
  static std::vector<std::string> Ids(const json& jobs) {
    std::vector<std::string> out;
    for (const auto& j : jobs["jobs"])
      out.push_back(j["cluster"].get<std::string>() + ":" + j["id"].get<std::string>());
    return out;
  }

  slurm::FakeCommandRunner b_fake_;
  service::testing::FakeCluster b_cluster_{b_fake_};
  std::unique_ptr<service::ServiceStore> a_store_, b_store_, a_read_, b_read_;
  service::Engines b_engines_;
  std::unique_ptr<service::SynchronizedAdvisor> shared_;
  std::unique_ptr<slurm::SlurmBackend> b_backend_;
  std::unique_ptr<service::Companion> a_, b_;
};

TEST_F(ClustersApiTest, ListsCarryTheClusterAndFilterByIt) {
  Start();
  // The job list pages one cluster's view: ?cluster=, else the first.
  EXPECT_EQ(Ids(GetJson("/v1/jobs")), (std::vector<std::string>{"a:3", "a:4"}));
  EXPECT_EQ(Ids(GetJson("/v1/jobs?cluster=b")), (std::vector<std::string>{"b:3", "b:7"}));
  EXPECT_EQ(Ids(GetJson("/v1/jobs?cluster=a&state=pending")), (std::vector<std::string>{"a:4"}));
  EXPECT_EQ(GetJson("/v1/jobs?cluster=zz", 404)["code"], "unknown_cluster");
  json nodes = GetJson("/v1/nodes?cluster=b")["nodes"];
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]["name"], "b1");
  EXPECT_EQ(nodes[0]["cluster"], "b");
  EXPECT_EQ(GetJson("/v1/nodes")["nodes"].size(), 2u);
  EXPECT_TRUE(GetJson("/v1/anomalies?cluster=a").is_array());
  GetJson("/v1/anomalies?cluster=zz", 404);
  json starts = GetJson("/v1/start-estimates?cluster=b")["pending"];
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0]["job_id"], "7");
  EXPECT_EQ(starts[0]["cluster"], "b");

  json clusters = GetJson("/v1/clusters")["clusters"];
  ASSERT_EQ(clusters.size(), 2u);
  EXPECT_EQ(clusters[0]["name"], "a");
  EXPECT_EQ(clusters[0]["slurm_conf"], "/etc/slurm-a/slurm.conf");
  EXPECT_EQ(clusters[1]["name"], "b");
  EXPECT_EQ(clusters[1]["slurm_cluster"], "gpu-b");
  EXPECT_EQ(clusters[1]["running"], 1);
  EXPECT_EQ(clusters[1]["pending"], 1);
  EXPECT_EQ(clusters[1]["slurm_ok"], true);
  json health = GetJson("/healthz");
  EXPECT_EQ(health["slurm_ok"], true);
  ASSERT_EQ(health["clusters"].size(), 2u);
  EXPECT_EQ(health["clusters"][1]["name"], "b");

  // The history learns across clusters: both jobs 3 are stored, each under its cluster (only
  // the default cluster's ids are unqualified).
  EXPECT_TRUE(read_history_->FindJob("a/3")->has_value());
  EXPECT_TRUE(read_history_->FindJob("b/3")->has_value());
  EXPECT_TRUE(read_history_->FindJob("b/7")->has_value());
  EXPECT_FALSE(read_history_->FindJob("3")->has_value());
  EXPECT_FALSE(read_history_->FindJob("a/7")->has_value());
}

TEST_F(ClustersApiTest, AJobIdLiveOnTwoClustersNeedsTheCluster) {
  Start();
  json both = GetJson("/v1/jobs/3", 409);
  EXPECT_EQ(both["code"], "ambiguous");
  EXPECT_EQ(both["clusters"], json::array({"a", "b"}));
  EXPECT_EQ(GetJson("/v1/jobs/3/why", 409)["code"], "ambiguous");
  json on_b = GetJson("/v1/jobs/3?cluster=b");
  EXPECT_EQ(on_b["cluster"], "b");
  EXPECT_EQ(on_b["node_list"], "b1");
  EXPECT_EQ(GetJson("/v1/jobs/3?cluster=a")["cluster"], "a");
  EXPECT_EQ(GetJson("/v1/jobs/3/why?cluster=b")["cluster"], "b");
  // An id on one cluster only needs no ?cluster=.
  EXPECT_EQ(GetJson("/v1/jobs/7")["cluster"], "b");
  EXPECT_EQ(GetJson("/v1/jobs/4/why")["cluster"], "a");
  GetJson("/v1/jobs/7?cluster=a", 404);
  GetJson("/v1/jobs/999", 404);
  GetJson("/v1/jobs/3?cluster=zz", 404);
}

TEST_F(ClustersApiTest, MetricsCarryAClusterLabelInOneFamilyEach) {
  Start();
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  const std::string& m = res->body;
  EXPECT_NE(m.find("schedmate_queue_jobs{cluster=\"a\",state=\"RUNNING\"} 1\n"), std::string::npos)
      << m;
  EXPECT_NE(m.find("schedmate_queue_jobs{cluster=\"b\",state=\"PENDING\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("schedmate_slurm_ok{cluster=\"b\"} 1\n"), std::string::npos);
  EXPECT_NE(m.find("schedmate_failures_total{cluster=\"a\",class=\"infra\"} 0\n"),
            std::string::npos);
  EXPECT_NE(m.find("schedmate_up 1\n"), std::string::npos);  // the process's own: no label
  // Each family's HELP once, its samples together (the exposition format requires it).
  size_t help = 0, at = 0;
  while ((at = m.find("# HELP schedmate_queue_jobs ", at)) != std::string::npos) ++help, ++at;
  EXPECT_EQ(help, 1u);
  size_t a_line = m.find("schedmate_slurm_ok{cluster=\"a\"}");
  size_t b_line = m.find("schedmate_slurm_ok{cluster=\"b\"}");
  size_t next_family = m.find("# HELP schedmate_ticks_total");
  ASSERT_NE(a_line, std::string::npos);
  EXPECT_LT(a_line, b_line);
  EXPECT_LT(b_line, next_family);
}

// The report is one cluster's: its records and its jobs of the shared history, by Slurm id.
TEST_F(ClustersApiTest, TheReportIsOneClustersRecordsAndJobs) {
  Start();
  auto ids = [&](service::ServiceStore& store) {
    std::vector<std::string> out;
    auto in = service::LoadReportInput(*read_history_, store, SimTime::FromSeconds(0),
                                       clock_.Now() + Duration::Hours(1));
    EXPECT_OK(in);
    if (in.ok())
      for (const auto& j : in->jobs) out.push_back(j.job.id);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(ids(*a_read_), (std::vector<std::string>{"3", "4"}));
  EXPECT_EQ(ids(*b_read_), (std::vector<std::string>{"3", "7"}));
  GetJson("/v1/report?since=7d&cluster=b");
  EXPECT_EQ(GetJson("/v1/report?since=7d&cluster=zz", 404)["code"], "unknown_cluster");
}

}  // namespace
}  // namespace schedmate::api
