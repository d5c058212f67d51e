#include "service/why.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace schedmate::service {
namespace {

const SimTime kNow = SimTime::FromSeconds(1'800'000'000);

slurm::SlurmNode Node(const std::string& name, int used, const std::string& partition = "gpu") {
  slurm::SlurmNode n;
  n.name = name;
  n.state = used > 0 ? "mixed" : "idle";
  n.gpus_total = 8;
  n.gpus_used = used;
  n.partitions = {partition};
  return n;
}

JobView Running(const std::string& id, const std::string& node, int gpus, Duration elapsed,
                std::optional<Duration> predicted) {
  JobView v;
  v.job.id = id;
  v.job.state = "RUNNING";
  v.job.partition = "gpu";
  v.job.nodes = 1;
  v.job.gpus_per_node = gpus;
  v.job.gpus = gpus;
  v.job.node_list = node;
  v.job.node_names = {node};
  v.job.start = kNow - elapsed;
  v.job.time_limit_min = 600;
  if (predicted) {
    Prediction p;
    p.duration = *predicted;
    v.prediction = p;
  }
  return v;
}

JobView Pending(const std::string& id, int gpus, int64_t priority, const std::string& reason) {
  JobView v;
  v.job.id = id;
  v.job.user = "alice";
  v.job.state = "PENDING";
  v.job.partition = "gpu";
  v.job.reason = reason;
  v.job.priority = priority;
  v.job.nodes = 1;
  v.job.gpus_per_node = gpus;
  v.job.gpus = gpus;
  v.job.submit = kNow - Duration::Minutes(5);
  v.job.time_limit_min = 240;
  return v;
}

std::vector<std::string> Kinds(const WhyAnswer& a) {
  std::vector<std::string> k;
  for (const auto& e : a.evidence) k.push_back(e.kind);
  return k;
}

const WhySuggestion* Suggestion(const WhyAnswer& a, const std::string& prefix) {
  for (const auto& s : a.suggestions)
    if (s.change.rfind(prefix, 0) == 0) return &s;
  return nullptr;
}

// gpu1 is full until job 1 ends (advisor: in 30 min); gpu2 has 4 free (job 2 holds 4; the
// tracker says it ends in 10 min). Job 10 wants 8 GPUs on one node and waits for Resources.
ServiceView Cluster() {
  ServiceView v;
  v.nodes = {Node("gpu1", 8), Node("gpu2", 4), Node("dbg1", 0, "debug")};
  v.jobs.push_back(Running("1", "gpu1", 8, Duration::Minutes(30), Duration::Minutes(60)));
  JobView two = Running("2", "gpu2", 4, Duration::Minutes(5), std::nullopt);
  LogMetrics m;
  m.at = kNow;
  m.eta = Duration::Minutes(10);
  two.metrics = m;
  v.jobs.push_back(two);
  v.jobs.push_back(Pending("10", 8, 1000, "Resources"));
  return v;
}

TEST(Why, ResourcesListsRunningJobsWithTheirSourcesAndWhenGpusFree) {
  ServiceView v = Cluster();
  auto a = ExplainJob(v, "10", kNow);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->state, "PENDING");
  EXPECT_EQ(a->reason_code, "Resources");
  EXPECT_EQ(a->reason_kind, "resources");
  EXPECT_TRUE(a->reason_known);
  ASSERT_FALSE(a->evidence.empty());
  EXPECT_EQ(a->evidence[0].kind, "free_gpus");
  EXPECT_EQ(a->evidence[0].value, 4);
  // Running jobs by expected end: job 2 (tracker, +10 min) before job 1 (advisor, +30 min).
  std::vector<const WhyEvidence*> running;
  for (const auto& e : a->evidence)
    if (e.kind == "running_job") running.push_back(&e);
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0]->job_id, "2");
  EXPECT_EQ(running[0]->source, "tracker");
  EXPECT_EQ(running[0]->at, kNow + Duration::Minutes(10));
  EXPECT_EQ(running[1]->job_id, "1");
  EXPECT_EQ(running[1]->source, "advisor");
  EXPECT_EQ(running[1]->at, kNow + Duration::Minutes(30));
  // 8 GPUs on one node: gpu2 is whole again when job 2 ends.
  const WhyEvidence* free_at = nullptr;
  for (const auto& e : a->evidence)
    if (e.kind == "gpus_free_at") free_at = &e;
  ASSERT_NE(free_at, nullptr);
  EXPECT_EQ(free_at->at, kNow + Duration::Minutes(10));
  // Nothing ahead: 4 GPUs start now; the idle debug partition starts it now too.
  const WhySuggestion* smaller = Suggestion(*a, "--gres=gpu:");
  ASSERT_NE(smaller, nullptr);
  EXPECT_EQ(smaller->change, "--gres=gpu:4");
  EXPECT_EQ(smaller->expected_start, kNow);
  const WhySuggestion* other = Suggestion(*a, "--partition=");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->change, "--partition=debug");
  EXPECT_EQ(other->expected_start, kNow);
  EXPECT_EQ(Suggestion(*a, "--time="), nullptr);  // it does not fit now: no backfill gap helps
}

TEST(Why, PriorityJobThatFitsGetsABackfillTimeLimitBeforeTheReservation) {
  ServiceView v = Cluster();
  // Job 11 (4 GPUs, lower priority) fits on gpu2 now, but job 10 holds a reservation from
  // +10 min (its start estimate). A limit of 9 minutes lets backfill start it now.
  v.jobs[2].start_estimate = StartEstimate{"10", kNow + Duration::Minutes(10), {"gpu2"}, "", ""};
  JobView eleven = Pending("11", 4, 500, "Priority");
  Prediction p;
  p.duration = Duration::Minutes(5);
  p.high = Duration::Minutes(8);
  eleven.prediction = p;
  v.jobs.push_back(eleven);
  auto a = ExplainJob(v, "11", kNow);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->reason_kind, "priority");
  bool ahead = false;
  for (const auto& e : a->evidence)
    if (e.kind == "job_ahead" && e.job_id == "10") ahead = e.at == kNow + Duration::Minutes(10);
  EXPECT_TRUE(ahead);
  const WhySuggestion* time = Suggestion(*a, "--time=");
  ASSERT_NE(time, nullptr);
  EXPECT_EQ(time->change, "--time=9");
  EXPECT_EQ(time->expected_start, kNow);
  // If the advisor expects it to need longer than the gap, no such limit is suggested.
  v.jobs.back().prediction->high = Duration::Minutes(45);
  auto b = ExplainJob(v, "11", kNow);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Suggestion(*b, "--time="), nullptr);
}

TEST(Why, DependencyListsTheJobWaitedForWithItsExpectedEnd) {
  ServiceView v = Cluster();
  JobView dep = Pending("12", 1, 100, "Dependency");
  dep.job.dependency = "afterok:1(unfulfilled)";
  v.jobs.push_back(dep);
  auto a = ExplainJob(v, "12", kNow);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->reason_kind, "dependency");
  ASSERT_EQ(Kinds(*a), std::vector<std::string>{"dependency"});
  EXPECT_EQ(a->evidence[0].job_id, "1");
  EXPECT_EQ(a->evidence[0].at, kNow + Duration::Minutes(30));
  EXPECT_EQ(a->evidence[0].source, "advisor");
}

TEST(Why, LimitsUserHoldsUnknownReasonsAndOtherStates) {
  ServiceView v = Cluster();
  JobView limited = Pending("13", 2, 100, "QOSMaxGRESPerUser");
  limited.job.qos = "normal";
  v.jobs.push_back(limited);
  JobView held = Pending("14", 2, 0, "JobHeldUser");
  v.jobs.push_back(held);
  JobView odd = Pending("15", 2, 100, "BrandNewReason");
  v.jobs.push_back(odd);

  auto a = ExplainJob(v, "13", kNow);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->reason_kind, "limit_group");
  EXPECT_EQ(Kinds(*a), (std::vector<std::string>{"limit", "user_running_gpus"}));
  auto h = ExplainJob(v, "14", kNow);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->suggestions.size(), 1u);
  EXPECT_EQ(h->suggestions[0].change, "scontrol release 14");
  auto u = ExplainJob(v, "15", kNow);
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->reason_known);
  EXPECT_EQ(u->reason_code, "BrandNewReason");
  EXPECT_EQ(u->reason_kind, "unknown");
  auto r = ExplainJob(v, "1", kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, "RUNNING");
  EXPECT_EQ(r->reason_code, "");
  EXPECT_EQ(r->expected_start, kNow - Duration::Minutes(30));
  EXPECT_EQ(ExplainJob(v, "999", kNow).status().code(), StatusCode::kNotFound);
}

TEST(Why, JsonCarriesTheInterfaceFields) {
  ServiceView v = Cluster();
  auto a = ExplainJob(v, "10", kNow);
  ASSERT_TRUE(a.ok());
  nlohmann::json j = WhyAnswerToJson(*a);
  for (const char* key : {"job_id", "state", "reason_code", "explanation", "evidence",
                          "expected_start", "suggestions"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["job_id"], "10");
  EXPECT_TRUE(j["expected_start"].is_null());  // no start estimate in this view
  ASSERT_FALSE(j["suggestions"].empty());
  EXPECT_EQ(j["suggestions"][0]["expected_start"], kNow.seconds());
  // Same view, same answer.
  EXPECT_EQ(WhyAnswerToJson(*ExplainJob(v, "10", kNow)).dump(), j.dump());
}

TEST(Why, QosLimitValueAndTheRequestItLeavesRoomFor) {
  ServiceView v = Cluster();  // gpu2 has 4 GPUs free
  v.qos = {{"gpu6", {{"MaxTRESPU", "cpu=32,gres/gpu=6"}}}, {"normal", {}}};
  JobView mine = Running("3", "gpu2", 2, Duration::Minutes(5), std::nullopt);
  mine.job.user = "alice";
  mine.job.qos = "gpu6";
  JobView theirs = Running("4", "gpu2", 2, Duration::Minutes(5), std::nullopt);
  theirs.job.user = "bob";  // another user's GPUs do not count against alice's per-user limit
  theirs.job.qos = "gpu6";
  v.jobs.push_back(mine);
  v.jobs.push_back(theirs);
  JobView limited = Pending("13", 8, 100, "QOSMaxGRESPerUser");
  limited.job.qos = "gpu6";
  v.jobs.push_back(limited);
  auto a = ExplainJob(v, "13", kNow);
  ASSERT_TRUE(a.ok());
  const WhyEvidence* value = nullptr;
  for (const auto& e : a->evidence)
    if (e.kind == "limit_value") value = &e;
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->name, "QOS gpu6 MaxTRESPU");
  EXPECT_EQ(value->value, 6);
  EXPECT_EQ(value->source, "sacctmgr");
  ASSERT_EQ(a->suggestions.size(), 1u);
  EXPECT_EQ(a->suggestions[0].change, "--gres=gpu:4");  // 6 - alice's 2
  EXPECT_EQ(a->suggestions[0].expected_start, kNow);    // 4 free on gpu2
  EXPECT_EQ(WhyAnswerToJson(*a)["evidence"][1]["name"], "QOS gpu6 MaxTRESPU");
  // No room left, or no sacctmgr data (no slurmdbd): the value or the suggestion is left out.
  v.jobs[v.jobs.size() - 1].job.gpus = 4;
  v.jobs[v.jobs.size() - 1].job.gpus_per_node = 4;
  EXPECT_TRUE(ExplainJob(v, "13", kNow)->suggestions.empty());
  v.qos.clear();
  auto none = ExplainJob(v, "13", kNow);
  for (const auto& e : none->evidence) EXPECT_NE(e.kind, "limit_value");
}

const WhyEvidence* EvidenceOf(const WhyAnswer& a, const std::string& kind) {
  for (const auto& e : a.evidence)
    if (e.kind == kind) return &e;
  return nullptr;
}

// Accounts root -> team -> sub; alice and bob in team, carol in sub.
ServiceView AssocCluster() {
  ServiceView v = Cluster();  // gpu2 has 4 GPUs free
  auto row = [](std::string account, std::string user, std::string parent,
                std::map<std::string, std::string> limits) {
    return slurm::AssocLimits{.cluster = "c",
                              .account = std::move(account),
                              .user = std::move(user),
                              .parent = std::move(parent),
                              .limits = std::move(limits)};
  };
  v.assocs = {row("root", "", "", {}),
              row("team", "", "root", {{"GrpTRES", "cpu=64,gres/gpu=6"}, {"MaxJobs", "5"}}),
              row("team", "alice", "", {{"GrpTRES", "gres/gpu=3"}, {"MaxJobs", "5"}}),
              row("team", "bob", "", {{"MaxJobs", "5"}}),
              row("sub", "", "team", {}),
              row("sub", "carol", "", {})};
  auto run = [&](const std::string& id, const std::string& user, const std::string& account,
                 int gpus) {
    JobView r = Running(id, "gpu2", gpus, Duration::Minutes(5), std::nullopt);
    r.job.user = user;
    r.job.account = account;
    v.jobs.push_back(r);
  };
  run("3", "alice", "team", 2);
  run("4", "bob", "team", 2);
  run("5", "carol", "sub", 1);
  JobView limited = Pending("13", 2, 100, "AssocGrpGRES");
  limited.job.account = "team";
  v.jobs.push_back(limited);
  return v;
}

TEST(Why, AssociationLimitsFromTheUsersAssociationOrItsAccounts) {
  // alice's own association: 3 GPUs, 2 held by her jobs in team (bob's do not count).
  ServiceView v = AssocCluster();
  auto a = ExplainJob(v, "13", kNow);
  ASSERT_TRUE(a.ok());
  const WhyEvidence* value = EvidenceOf(*a, "limit_value");
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->name, "Assoc team/alice GrpTRES");
  EXPECT_EQ(value->value, 3);
  EXPECT_EQ(value->source, "sacctmgr");
  const WhyEvidence* used = EvidenceOf(*a, "limit_used");
  ASSERT_NE(used, nullptr);
  EXPECT_EQ(used->value, 2);
  ASSERT_EQ(a->suggestions.size(), 1u);
  EXPECT_EQ(a->suggestions[0].change, "--gres=gpu:1");
  EXPECT_EQ(a->suggestions[0].expected_start, kNow);

  // Without it, the account's Grp limit: every job in team and below (alice 2, bob 2, carol 1).
  v.assocs[2].limits.erase("GrpTRES");
  auto t = ExplainJob(v, "13", kNow);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(EvidenceOf(*t, "limit_value")->name, "Assoc team GrpTRES");
  EXPECT_EQ(EvidenceOf(*t, "limit_value")->value, 6);
  EXPECT_EQ(EvidenceOf(*t, "limit_used")->value, 5);
  ASSERT_EQ(t->suggestions.size(), 1u);
  EXPECT_EQ(t->suggestions[0].change, "--gres=gpu:1");
  v.assocs[1].limits["GrpTRES"] = "gres/gpu=5";  // no room at all: no suggestion
  EXPECT_TRUE(ExplainJob(v, "13", kNow)->suggestions.empty());

  // GPU-minutes of running time limits: 2 x 595 + 2 x 595 + 1 x 595 = 2975 held; 300 left, so
  // 2 GPUs fit for 150 minutes (the job asks for 240).
  v.assocs[1].limits = {{"GrpTRESRunMins", "gres/gpu=3275"}};
  v.jobs.back().job.reason = "AssocGrpGRESRunMinutes";
  auto m = ExplainJob(v, "13", kNow);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(EvidenceOf(*m, "limit_value")->name, "Assoc team GrpTRESRunMins");
  EXPECT_EQ(EvidenceOf(*m, "limit_value")->value, 3275);
  EXPECT_EQ(EvidenceOf(*m, "limit_used")->value, 2975);
  ASSERT_EQ(m->suggestions.size(), 1u);
  EXPECT_EQ(m->suggestions[0].change, "--time=150");
  EXPECT_EQ(m->suggestions[0].expected_start, kNow);

  // A count limit: the value (inherited onto alice's row), no request to change.
  v.jobs.back().job.reason = "AssocMaxJobsLimit";
  auto j = ExplainJob(v, "13", kNow);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(EvidenceOf(*j, "limit_value")->name, "Assoc team/alice MaxJobs");
  EXPECT_EQ(EvidenceOf(*j, "limit_value")->value, 5);
  EXPECT_TRUE(j->suggestions.empty());

  // No association for the job's user, or no sacctmgr data: no value.
  v.jobs.back().job.user = "dave";
  EXPECT_EQ(EvidenceOf(*ExplainJob(v, "13", kNow), "limit_value"), nullptr);
  v.assocs.clear();
  v.jobs.back().job.user = "alice";
  EXPECT_EQ(EvidenceOf(*ExplainJob(v, "13", kNow), "limit_value"), nullptr);
}

}  // namespace
}  // namespace schedmate::service
