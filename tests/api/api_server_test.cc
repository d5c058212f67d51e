#include "api/api_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "api_fixture.h"
#include "core/file_util.h"
#include "core/json_dump.h"
#include "service/fake_cluster.h"
#include "testing/test_util.h"

namespace schedmate::api {
namespace {

using nlohmann::json;

class ApiServerTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    cluster_.AddNode("gpu1", 8);
    config_.max_body_bytes = 4096;
  }
  void Start(const std::string& token = "t0k") {
    CreateCompanion();
    StartServer(token);
  }
  // A running job of `user` on gpu1 whose StdOut is `log`.
  void RunningJob(const std::string& id, const std::string& user, const std::string& log) {
    auto& j = cluster_.Job(id);
    j.id = id;
    j.user = user;
    j.state = "RUNNING";
    j.node = "gpu1";
    j.start = clock_.Now().seconds() - 60;
    j.std_out = log;
  }
  // Records that schedmate drained `node` (what a failure's drain action leaves in the store).
  void RecordDrain(const std::string& node) {
    service::ActionRecord a;
    a.at = clock_.Now();
    a.node = node;
    a.kind = service::ActionKind::kDrainNode;
    a.reason = "schedmate: gpu_xid in job 1";
    a.outcome = service::ActionOutcome::kDone;
    ASSERT_OK(store_->AddAction(a));
  }
};

TEST_F(ApiServerTest, JobsNodesEstimatesAndMetrics) {
  std::string log = dir_.File("r.out");
  ASSERT_OK(WriteStringToFile(log, "step 40/100 loss 0.5\n"));
  auto& r = cluster_.Job("3");
  r.id = "3";
  r.state = "RUNNING";
  r.node = "gpu1";
  r.gpus_per_node = 8;
  r.start = clock_.Now().seconds() - 60;
  r.std_out = log;
  auto& p = cluster_.Job("4");
  p.id = "4";
  p.reason = "Resources";
  p.gpus_per_node = 8;
  cluster_.Render();
  Start();
  json health = GetJson("/healthz");
  EXPECT_EQ(health["ok"], true);
  EXPECT_EQ(health["slurm_ok"], true);
  json jobs = GetJson("/v1/jobs");
  ASSERT_EQ(jobs["jobs"].size(), 2u);
  EXPECT_EQ(GetJson("/v1/jobs?state=running")["jobs"].size(), 1u);
  json running = GetJson("/v1/jobs/3");
  EXPECT_EQ(running["metrics"]["step"], 40);
  EXPECT_EQ(running["std_out"], log);
  GetJson("/v1/jobs/999", 404);
  EXPECT_EQ(GetJson("/v1/nodes")["nodes"][0]["gpus_total"], 8);
  json starts = GetJson("/v1/start-estimates");
  ASSERT_EQ(starts["pending"].size(), 1u);
  EXPECT_EQ(starts["pending"][0]["job_id"], "4");
  EXPECT_EQ(starts["pending"][0]["pending_reason"], "Resources");
  EXPECT_TRUE(starts["pending"][0]["estimated_start"].is_number());
  EXPECT_GT(starts["pending"][0]["estimated_start"].get<int64_t>(), clock_.Now().seconds());
  EXPECT_EQ(GetJson("/v1/predictions")["predictions"].size(), 2u);
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("schedmate_queue_jobs{state=\"RUNNING\"} 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("schedmate_failures_total{class=\"infra\"} 0"), std::string::npos);
  EXPECT_NE(metrics->body.find("schedmate_failure_diagnoses_total{engine=\"llm_fallback\"} 0"),
            std::string::npos);
  auto logres = client_->Get("/v1/jobs/3/log?bytes=9", {{"Authorization", "Bearer t0k"}});
  ASSERT_TRUE(logres);
  EXPECT_EQ(logres->body, "loss 0.5\n");
  json series = GetJson("/v1/jobs/3/metrics");
  EXPECT_EQ(series["samples"].size(), 1u);
  // Why job 4 waits: Slurm's reason in words, the running job that holds the GPUs, its start.
  json why = GetJson("/v1/jobs/4/why");
  EXPECT_EQ(why["job_id"], "4");
  EXPECT_EQ(why["state"], "PENDING");
  EXPECT_EQ(why["reason_code"], "Resources");
  EXPECT_EQ(why["reason_kind"], "resources");
  EXPECT_TRUE(why["expected_start"].is_number());
  bool holder = false;
  for (const auto& e : why["evidence"])
    if (e["kind"] == "running_job" && e["job_id"] == "3") holder = true;
  EXPECT_TRUE(holder) << why.dump(1);
  EXPECT_TRUE(why["suggestions"].is_array());
  EXPECT_EQ(GetJson("/v1/jobs/3/why")["state"], "RUNNING");
  GetJson("/v1/jobs/999/why", 404);
  // Nothing anomalous in this scene; every kind is exported, at 0.
  EXPECT_TRUE(GetJson("/v1/anomalies").empty());
  EXPECT_NE(metrics->body.find("schedmate_anomalies{kind=\"stalled\"} 0"), std::string::npos);
}

// The job list is serialised once per published view and state filter: a pass that changes the
// queue changes the answer, and filters do not answer for each other.
TEST_F(ApiServerTest, JobListFollowsEveryPass) {
  auto& p = cluster_.Job("4");
  p.id = "4";
  p.reason = "Resources";
  cluster_.Render();
  Start();
  EXPECT_EQ(GetJson("/v1/jobs")["jobs"].size(), 1u);
  EXPECT_EQ(GetJson("/v1/jobs?state=running")["jobs"].size(), 0u);
  EXPECT_EQ(GetJson("/v1/jobs?state=pending")["jobs"].size(), 1u);
  auto& q = cluster_.Job("5");
  q.id = "5";
  q.reason = "Priority";
  p.state = "RUNNING";
  p.node = "gpu1";
  p.start = clock_.Now().seconds();
  cluster_.Render();
  ASSERT_OK(companion_->Tick());
  json jobs = GetJson("/v1/jobs");
  ASSERT_EQ(jobs["jobs"].size(), 2u);
  EXPECT_EQ(jobs["jobs"][0]["id"], "4");
  EXPECT_EQ(jobs["jobs"][0]["state"], "RUNNING");
  EXPECT_EQ(jobs["jobs"][1]["id"], "5");
  EXPECT_EQ(GetJson("/v1/jobs?state=running")["jobs"].size(), 1u);
  EXPECT_EQ(GetJson("/v1/jobs?state=pending")["jobs"][0]["id"], "5");
  EXPECT_EQ(GetJson("/v1/jobs?state=nonsense")["jobs"].size(), 0u);
  // Written job by job, the body is exactly the document's compact dump (keys sorted).
  for (const char* path : {"/v1/jobs", "/v1/jobs?state=nonsense"}) {
    auto res = client_->Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->body, DumpJson(json::parse(res->body))) << path;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  }
}

// GET /v1/jobs pages by job id (job_list.h): a client following `next` while passes run between
// its pages gets every job that stayed in the queue exactly once, in id order.
TEST_F(ApiServerTest, JobPagesFollowNextWhileTheQueueChanges) {
  for (int i = 1; i <= 30; ++i) {
    auto& j = cluster_.Job(std::to_string(i));
    j.id = std::to_string(i);
    j.user = i % 3 == 0 ? "ana" : "bo";
  }
  cluster_.Render();
  Start();
  json first = GetJson("/v1/jobs");
  EXPECT_EQ(first["jobs"].size(), 30u);  // default limit 200
  EXPECT_EQ(first["total"], 30);
  EXPECT_EQ(first["limit"], 200);
  EXPECT_TRUE(first["next"].is_null());
  EXPECT_EQ(GetJson("/v1/jobs?user=ana")["total"], 10);
  EXPECT_EQ(GetJson("/v1/jobs?user=ana&state=RUNNING")["total"], 0);

  std::vector<std::string> seen;
  std::string path = "/v1/jobs?limit=7";
  for (int page = 0; page < 20; ++page) {
    json p = GetJson(path);
    for (const auto& j : p["jobs"]) seen.push_back(j["id"]);
    if (p["next"].is_null()) break;
    EXPECT_EQ(p["jobs"].size(), 7u);
    path = "/v1/jobs?limit=7&after=" + p["next"].get<std::string>();
    // A pass between pages: job 2 (already shown) and job 29 (not yet) end, job 31 arrives.
    if (page == 0) {
      cluster_.Remove("2");
      cluster_.Remove("29");
      auto& n = cluster_.Job("31");
      n.id = "31";
      cluster_.Render();
      ASSERT_OK(companion_->Tick());
    }
  }
  std::vector<std::string> want;
  for (int i = 1; i <= 31; ++i)
    if (i != 29) want.push_back(std::to_string(i));
  EXPECT_EQ(seen, want);
}

TEST_F(ApiServerTest, JobPageBoundsAreRefusedNamingTheField) {
  cluster_.Render();
  Start();
  for (const char* path :
       {"/v1/jobs?limit=0", "/v1/jobs?limit=5001", "/v1/jobs?limit=ten", "/v1/jobs?limit=-5"}) {
    json err = GetJson(path, 400);
    EXPECT_EQ(err["code"], "bad_request") << path;
    EXPECT_EQ(err["field"], "limit") << path;
  }
  EXPECT_EQ(GetJson("/v1/jobs?after=")["total"], 0);  // empty: from the first job
  EXPECT_EQ(GetJson("/v1/jobs?after=" + std::string(65, '1'), 400)["field"], "after");
  EXPECT_EQ(GetJson("/v1/jobs?limit=5000")["limit"], 5000);
  EXPECT_EQ(GetJson("/v1/jobs?limit=1")["limit"], 1);
}

// The ETag names the published view: the same view answers 304 to If-None-Match, a new pass
// a new body.
TEST_F(ApiServerTest, JobListEtagFollowsTheView) {
  auto& p = cluster_.Job("4");
  p.id = "4";
  cluster_.Render();
  Start();
  auto res = client_->Get("/v1/jobs");
  ASSERT_TRUE(res);
  std::string etag = res->get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  auto same = client_->Get("/v1/jobs", {{"If-None-Match", etag}});
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 304);
  EXPECT_TRUE(same->body.empty());
  EXPECT_EQ(same->get_header_value("ETag"), etag);
  ASSERT_OK(companion_->Tick());
  auto next = client_->Get("/v1/jobs", {{"If-None-Match", etag}});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  EXPECT_NE(next->get_header_value("ETag"), etag);
  EXPECT_EQ(json::parse(next->body)["jobs"].size(), 1u);
}

TEST_F(ApiServerTest, EstimateForTheLuaHookAndJson) {
  config_.submit_policy = service::SubmitPolicy::kSet;
  cluster_.Render();
  Start();
  auto kv = client_->Post("/v1/estimate?format=kv&name=bert&uid=0&nodes=1&tres_per_node=gres:gpu:2",
                          "#!/bin/bash\npython train.py\n", "text/plain");
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->status, 200);
  EXPECT_NE(kv->body.find("estimate_s=3600\n"), std::string::npos) << kv->body;
  EXPECT_NE(kv->body.find("time_limit_min="), std::string::npos);
  EXPECT_NE(kv->body.find("message=schedmate: estimated run time"), std::string::npos);
  auto js =
      client_->Post("/v1/estimate", R"({"script":"x","name":"bert","gpus":2,"time_limit_min":30})",
                    "application/json");
  ASSERT_TRUE(js);
  json body = json::parse(js->body);
  EXPECT_EQ(body["estimate_s"], 900);             // half the given limit
  EXPECT_TRUE(body["time_limit_min"].is_null());  // the user gave one; policy "set" keeps it
  auto bad = client_->Post("/v1/estimate", "{nope", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  auto big = client_->Post("/v1/estimate", std::string(10000, 'x'), "text/plain");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
}

// Found by fuzz/api/api_request_fuzz: a time limit past Slurm's range (its NO_VAL/INFINITE, or one
// whose microseconds overflow int64) reached the advisor as a real limit; it now means "none" in
// both request forms, as job_submit.lua sends it.
TEST_F(ApiServerTest, EstimateTreatsLimitsPastSlurmsRangeAsNone) {
  cluster_.Render();
  Start();
  auto post_json = [&](const std::string& body) {
    auto res = client_->Post("/v1/estimate", body, "application/json");
    EXPECT_TRUE(res);
    EXPECT_EQ(res ? res->status : 0, 200) << (res ? res->body : "");
    return res ? json::parse(res->body, nullptr, false) : json();
  };
  const json none = post_json(R"({"script":"x","name":"bert"})");
  ASSERT_TRUE(none["estimate_s"].is_number());
  for (const char* limit : {"4294967294", "4294967295", "200000000000000000"}) {
    SCOPED_TRACE(limit);
    const json body =
        post_json(std::string(R"({"script":"x","name":"bert","time_limit_min":)") + limit + "}");
    EXPECT_EQ(body["estimate_s"], none["estimate_s"]);
    EXPECT_EQ(body["prediction"]["high_s"], none["prediction"]["high_s"]);
    auto kv = client_->Post(
        (std::string("/v1/estimate?format=kv&name=bert&time_limit_min=") + limit).c_str(), "x",
        "text/plain");
    ASSERT_TRUE(kv);
    EXPECT_EQ(kv->status, 200);
    EXPECT_NE(kv->body.find("estimate_s=" + none["estimate_s"].dump() + "\n"), std::string::npos)
        << kv->body;
  }
}

TEST_F(ApiServerTest, StateChangesNeedTheToken) {
  cluster_.SetDrained("gpu1", "schedmate: gpu_xid in job 1");
  RecordDrain("gpu1");
  cluster_.Render();
  Start("s3cret");
  auto none = client_->Post("/v1/nodes/gpu1/resume", "", "text/plain");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  httplib::Headers wrong = {{"Authorization", "Bearer nope"}};
  EXPECT_EQ(client_->Post("/v1/nodes/gpu1/resume", wrong, "", "text/plain")->status, 401);
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update NodeName=gpu1 State=RESUME").empty());
  httplib::Headers right = {{"Authorization", "Bearer s3cret"}};
  auto ok = client_->Post("/v1/nodes/gpu1/resume", right, "", "text/plain");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update NodeName=gpu1 State=RESUME").size(), 1u);
  json actions = GetJson("/v1/actions");
  ASSERT_EQ(actions["actions"].size(), 2u);
  EXPECT_EQ(actions["actions"][0]["kind"], "resume");
  EXPECT_EQ(client_->Post("/v1/nodes/gpu1;reboot/resume", right, "", "text/plain")->status, 404);
}

TEST_F(ApiServerTest, NoTokenConfiguredRefusesStateChanges) {
  cluster_.Render();
  Start("");
  httplib::Headers h = {{"Authorization", "Bearer "}};
  auto res = client_->Post("/v1/nodes/gpu1/resume", h, "", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
}

TEST_F(ApiServerTest, LogsNeverComeFromARequestPath) {
  // A job whose StdOut is a symlink to a file it does not own is not served.
  std::string target = dir_.File("secret.txt");
  ASSERT_OK(WriteStringToFile(target, "secret"));
  std::filesystem::create_symlink(target, dir_.File("evil.out"));
  auto& j = cluster_.Job("8");
  j.id = "8";
  j.state = "RUNNING";
  j.node = "gpu1";
  j.std_out = dir_.File("evil.out");
  cluster_.Render();
  Start();
  auto res = client_->Get("/v1/jobs/8/log");
  ASSERT_TRUE(res);
  EXPECT_NE(res->status, 200);
  EXPECT_EQ(res->body.find("secret\""), std::string::npos);
  EXPECT_EQ(client_->Get("/v1/jobs/..%2F..%2Fetc%2Fpasswd/log")->status, 404);
  EXPECT_EQ(client_->Get("/v1/failures/1/log", {{"Authorization", "Bearer t0k"}})->status, 404);
}

std::string MyUserName() {
  passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : "";
}

// Defect: GET /v1/jobs/{id}/log fell back to the service's own uid when the job's user was empty
// or did not resolve, so a root service served any root-owned file (/etc/shadow) as a job log.
TEST_F(ApiServerTest, FilesOfOtherUsersAndOfRootAreNeverServedAsAJobLog) {
  // Owned by the user running the service (root in CI), like /etc/shadow.
  std::string secret = dir_.File("root-secret.txt");
  ASSERT_OK(WriteStringToFile(secret, "root:SECRETHASH:19000:0:99999:7:::\n"));
  std::vector<std::string> ids = {"20", "21"};
  RunningJob("20", "", secret);                             // no user in Slurm's answer
  RunningJob("21", "schedmate-no-such-user-4711", secret);  // a user this host does not know
  if (std::filesystem::exists("/etc/shadow")) {
    RunningJob("22", "", "/etc/shadow");
    ids.push_back("22");
  }
  if (getpwnam("nobody") != nullptr && MyUserName() != "nobody") {
    RunningJob("23", "nobody", secret);  // another user's job naming the service's file
    ids.push_back("23");
  }
  cluster_.Render();
  Start();
  httplib::Headers auth = {{"Authorization", "Bearer t0k"}};
  for (const auto& id : ids) {
    SCOPED_TRACE("job " + id);
    auto res = client_->Get(("/v1/jobs/" + id + "/log").c_str(), auth);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 403) << res->body;
    EXPECT_EQ(res->body.find("SECRETHASH"), std::string::npos);
    EXPECT_EQ(res->body.find("root:"), std::string::npos);
    json body = json::parse(res->body, nullptr, false);
    EXPECT_EQ(body.value("code", ""), "log_refused") << res->body;
  }
}

TEST_F(ApiServerTest, AnotherUsersOwnLogIsServedOnlyAsThatUsersJob) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown a file to another user";
  passwd* nobody = getpwnam("nobody");
  if (nobody == nullptr) GTEST_SKIP() << "no user 'nobody' here";
  std::string log = dir_.File("nobody.out");
  ASSERT_OK(WriteStringToFile(log, "step 1/2 loss 0.1\n"));
  ASSERT_EQ(chown(log.c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  RunningJob("24", "nobody", log);
  RunningJob("25", "root", log);  // root's job naming nobody's file
  cluster_.Render();
  Start();
  httplib::Headers auth = {{"Authorization", "Bearer t0k"}};
  auto own = client_->Get("/v1/jobs/24/log", auth);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->status, 200);
  EXPECT_EQ(own->body, "step 1/2 loss 0.1\n");
  auto other = client_->Get("/v1/jobs/25/log", auth);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 403);
}

TEST_F(ApiServerTest, LogReadsFollowServeLogs) {
  std::string log = dir_.File("mine.out");
  ASSERT_OK(WriteStringToFile(log, "step 3/9\n"));
  RunningJob("26", MyUserName(), log);
  cluster_.Render();
  auto restart = [&](service::LogAccess access, const std::string& token) {
    server_.reset();
    config_.serve_logs = access;
    CreateCompanion();
    StartServer(token);
  };
  auto get = [&](const httplib::Headers& h) {
    auto res = client_->Get("/v1/jobs/26/log", h);
    EXPECT_TRUE(res);
    return res ? std::make_pair(res->status, json::parse(res->body, nullptr, false))
               : std::make_pair(0, json());
  };
  httplib::Headers none, wrong = {{"Authorization", "Bearer nope"}},
                         right = {{"Authorization", "Bearer t0k"}};
  // Default (token): the bearer token is needed.
  restart(service::ServiceConfig().serve_logs, "t0k");
  auto [s1, b1] = get(none);
  EXPECT_EQ(s1, 401);
  EXPECT_EQ(b1.value("code", ""), "unauthorized");
  EXPECT_EQ(get(wrong).first, 401);
  auto ok = client_->Get("/v1/jobs/26/log", right);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "step 3/9\n");
  // token, but none configured: nobody reads logs.
  restart(service::LogAccess::kToken, "");
  auto [s2, b2] = get(right);
  EXPECT_EQ(s2, 403);
  EXPECT_EQ(b2.value("code", ""), "token_not_configured");
  // off: not even with the token.
  restart(service::LogAccess::kOff, "t0k");
  auto [s3, b3] = get(right);
  EXPECT_EQ(s3, 403);
  EXPECT_EQ(b3.value("code", ""), "logs_off");
  // all: anyone who reaches the API.
  restart(service::LogAccess::kAll, "t0k");
  EXPECT_EQ(get(none).first, 200);
}

TEST_F(ApiServerTest, CapturedFailureLogNeedsTheTokenToo) {
  std::string log = dir_.File("xid.out");
  ASSERT_OK(WriteStringToFile(log, "step 1\nNVRM: Xid (PCI:0000:3b:00): 79, fallen off the bus\n"));
  RunningJob("27", MyUserName(), log);
  cluster_.Render();
  CreateCompanion();
  clock_.Advance(Duration::Seconds(5));
  auto& j = cluster_.Job("27");
  j.state = "FAILED";
  j.exit_code = 1;
  j.end = clock_.Now().seconds() - 1;
  cluster_.Render();
  ASSERT_OK(companion_->Tick());
  StartServer();
  json failures = GetJson("/v1/failures");
  ASSERT_EQ(failures["failures"].size(), 1u);
  std::string path =
      "/v1/failures/" + std::to_string(failures["failures"][0]["id"].get<int64_t>()) + "/log";
  EXPECT_EQ(client_->Get(path.c_str())->status, 401);
  auto res = client_->Get(path.c_str(), {{"Authorization", "Bearer t0k"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("Xid"), std::string::npos);
}

// An action whose record cannot be written is not executed; /healthz says the store is degraded
// and /metrics counts the errors; /v1/actions shows the typed outcome and requeue fields.
TEST_F(ApiServerTest, StoreFailuresShowInHealthzMetricsAndActions) {
  std::string log = dir_.File("xid2.out");
  ASSERT_OK(WriteStringToFile(log, "step 1\nNVRM: Xid (PCI:0000:3b:00): 79, fallen off the bus\n"));
  RunningJob("28", MyUserName(), log);
  cluster_.Render();
  CreateCompanion();
  StartServer();
  json health = GetJson("/healthz");
  EXPECT_EQ(health["status"], "ok");
  EXPECT_EQ(health["store_errors"], 0);
  EXPECT_TRUE(health["last_store_error_at"].is_null());
  ASSERT_OK(
      db_->Exec("CREATE TEMP TRIGGER refuse_actions BEFORE INSERT ON service_actions "
                "BEGIN SELECT RAISE(FAIL, 'disk I/O error (injected)'); END;"));
  clock_.Advance(Duration::Seconds(5));
  auto& j = cluster_.Job("28");
  j.state = "FAILED";
  j.exit_code = 1;
  j.end = clock_.Now().seconds() - 1;
  cluster_.Render();
  ASSERT_OK(companion_->Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update NodeName").empty());
  health = GetJson("/healthz");
  EXPECT_EQ(health["ok"], true);  // alive
  EXPECT_EQ(health["status"], "degraded");
  EXPECT_EQ(health["store_ok"], false);
  EXPECT_EQ(health["store_errors"], 3);
  EXPECT_EQ(health["last_store_error_at"], clock_.Now().seconds());
  EXPECT_NE(health["last_store_error"].get<std::string>().find("injected"), std::string::npos);
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("schedmate_store_errors_total 3\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("schedmate_store_degraded 1\n"), std::string::npos);
  EXPECT_NE(
      metrics->body.find("schedmate_actions_total{kind=\"requeue\",outcome=\"not_recorded\"} 1\n"),
      std::string::npos)
      << metrics->body;
  json actions = GetJson("/v1/actions")["actions"];
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_EQ(actions[1]["kind"], "requeue");
  EXPECT_EQ(actions[1]["outcome"], "not_recorded");
  EXPECT_EQ(actions[1]["attempt"], 1);
  EXPECT_EQ(actions[1]["budget"], 1);
  EXPECT_EQ(actions[1]["delay_s"], 60);
  EXPECT_EQ(actions[1]["release_at"], clock_.Now().seconds() + 60);
  EXPECT_EQ(actions[1]["exclude_nodes"], json::array());  // gpu1 is the only node
  EXPECT_TRUE(actions[1]["skip_reason"].is_null());
  EXPECT_EQ(actions[0]["kind"], "notify");
  EXPECT_EQ(actions[0]["requeue_outcome"], "not_recorded");  // the notice says so
  EXPECT_FALSE(actions[1].contains("requeue_outcome"));      // notices only
}

// Defect: any well-formed name (ALL, .., unknown nodes, nodes an operator drained) went to
// `scontrol update NodeName=X State=RESUME`.
TEST_F(ApiServerTest, ResumesOnlyNodesSchedmateDrained) {
  cluster_.AddNode("gpu2", 8);
  cluster_.SetDrained("gpu2", "maintenance: PSU swap");  // an operator's drain
  cluster_.AddNode("gpu3", 8);
  cluster_.SetDrained("gpu3", "schedmate: looks like ours");  // but schedmate never drained it
  cluster_.AddNode("gpu4", 8);
  cluster_.SetDrained("gpu4", "maintenance: after schedmate");  // ours, since re-drained by hand
  RecordDrain("gpu4");
  cluster_.AddNode("gpu5", 8);  // ours, already resumed by someone
  RecordDrain("gpu5");
  cluster_.Render();
  Start("s3cret");
  httplib::Headers auth = {{"Authorization", "Bearer s3cret"}};
  const std::vector<std::pair<std::string, int>> cases = {
      {"ALL", 404},  {"..", 404},   {"nosuchnode", 404}, {"gpu1", 409},
      {"gpu2", 409}, {"gpu3", 409}, {"gpu4", 409},       {"gpu5", 409}};
  for (const auto& [node, want] : cases) {
    SCOPED_TRACE(node);
    auto res = client_->Post(("/v1/nodes/" + node + "/resume").c_str(), auth, "", "text/plain");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, want) << res->body;
    json body = json::parse(res->body, nullptr, false);
    EXPECT_TRUE(body.contains("code")) << res->body;
  }
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update NodeName").empty());
}

TEST(ConstantTimeEquals, ComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("Bearer s3cret", "Bearer s3cret"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3creT", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("Xearer s3cret", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3cre", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("Bearer s3cretX", "Bearer s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace schedmate::api
