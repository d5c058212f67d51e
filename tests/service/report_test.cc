// schedmate report (service/report.h): a store seeded with known jobs gives exact numbers in the
// JSON; an empty period gives zeros and nulls; bad --since values are refused naming the flag.

#include "service/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/sqlite_db.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using nlohmann::json;
using testing::TempDir;

const SimTime kT0 = SimTime::FromSeconds(1793491200);  // 2026-11-01T00:00:00Z
SimTime At(double hours) { return kT0 + Duration::FromSecondsF(hours * 3600); }
Duration H(double hours) { return Duration::FromSecondsF(hours * 3600); }

store::StoredJob Job(const std::string& id, const std::string& user, const std::string& vc,
                     int gpus, double submit_h, std::optional<double> start_h, double run_h,
                     JobState state) {
  store::StoredJob s;
  s.job.id = id;
  s.job.user = user;
  s.job.vc = vc;
  s.job.gpus = GpuAmount::Whole(gpus);
  s.job.submit = At(submit_h);
  if (start_h) {
    s.job.duration = H(run_h);
    s.finish = At(*start_h + run_h);
    s.job.state = state;
  }
  s.source = "slurm";
  return s;
}

store::StoredPrediction Pred(const std::string& id, double made_h, double p50_h, double low_h,
                             double high_h) {
  return {id, At(made_h), "advisor", H(p50_h), H(low_h), H(high_h), 0.5, "", ""};
}

FailureRecord Failure(const std::string& id, double at_h, FailureClass cls, std::string cat) {
  FailureRecord f;
  f.run_key = id + "@" + std::to_string(At(at_h).seconds());
  f.job_id = id;
  f.at = At(at_h);
  f.state = "FAILED";
  f.cls = cls;
  f.category = std::move(cat);
  return f;
}

ActionRecord Action(const std::string& id, double at_h, ActionKind kind, ActionOutcome outcome,
                    bool dry_run) {
  ActionRecord a;
  a.at = At(at_h);
  a.job_id = id;
  a.kind = kind;
  a.outcome = outcome;
  a.dry_run = dry_run;
  return a;
}

MetricSample Sample(const std::string& id, double at_h, bool stalled) {
  MetricSample m;
  m.job_id = id;
  m.at = At(at_h);
  m.stalled = stalled;
  return m;
}

// The seeded history; the period is [T0, T0 + 48 h). Expected values are worked out by hand in
// the tests below.
class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::move(store::SqliteDb::Open(dir_.File("schedmate.db"))).value();
    history_ = std::move(store::SqliteHistoryStore::Attach(*db_)).value();
    service_ = std::move(ServiceStore::Attach(*db_)).value();
    const store::StoredJob jobs[] = {
        // alice: 4 GPUs, waits 1 h, runs 2 h, completed: 8 GPU-h; predicted 1 h at T0.
        Job("101", "alice", "gpu", 4, 0, 1, 2, JobState::kCompleted),
        // bob: 2 GPUs, no wait, runs 5 h, failed (infra): 10 GPU-h.
        Job("102", "bob", "gpu", 2, 2, 2, 5, JobState::kFailed),
        // alice: started before the period, 3 h in all, 2 h inside, timeout: 2 GPU-h.
        Job("103", "alice", "debug", 1, -2, -1, 3, JobState::kTimeout),
        // carol: 8 GPUs, waits 2 h, runs 1 h (30 min stalled): 8 GPU-h; predicted 4 h.
        Job("104", "carol", "gpu", 8, 10, 12, 1, JobState::kCompleted),
        // bob: pending or running at the end: not in the GPU-hours.
        Job("105", "bob", "gpu", 2, 20, std::nullopt, 0, JobState::kUnknown),
        // dave: ended before the period.
        Job("106", "dave", "gpu", 4, -10, -5, 4, JobState::kCompleted),
        // erin: no wait, 30 min on 1 GPU, completed, never predicted: 0.5 GPU-h.
        Job("107", "erin", "debug", 1, 30, 30, 0.5, JobState::kCompleted),
        // submitted after the period.
        Job("108", "erin", "debug", 1, 50, 50, 1, JobState::kCompleted),
    };
    for (const auto& j : jobs) ASSERT_OK(history_->PutJob(j));
    // 101: the prediction made before its start counts (ratio 2: within x2, covered); the one
    // made after its start is ignored.
    ASSERT_OK(history_->PutPrediction(Pred("101", 0, 1, 0.5, 3)));
    ASSERT_OK(history_->PutPrediction(Pred("101", 2, 2, 1.5, 2.5)));
    ASSERT_OK(history_->PutPrediction(Pred("102", 2, 5, 4, 6)));  // failed: not scored
    // 104: ratio 0.25, |log2| = 2, outside [2 h, 8 h].
    ASSERT_OK(history_->PutPrediction(Pred("104", 11, 4, 2, 8)));
    ASSERT_OK(service_->AddMetrics(
        {Sample("104", 12, false), Sample("104", 12.25, true), Sample("104", 12.75, false)}));
    ASSERT_OK(service_->AddFailure(Failure("102", 7, FailureClass::kInfra, "nccl_timeout")));
    ASSERT_OK(service_->AddFailure(Failure("103", 2, FailureClass::kApp, "time_limit")));
    ASSERT_OK(service_->AddFailure(Failure("106", -5, FailureClass::kApp, "oom")));  // before
    ASSERT_OK(
        service_->AddAction(Action("102", 7, ActionKind::kRequeue, ActionOutcome::kDone, false)));
    ASSERT_OK(service_->AddAction(
        Action("102", 7, ActionKind::kDrainNode, ActionOutcome::kDryRun, true)));
    ASSERT_OK(service_->AddAction(
        Action("106", -5, ActionKind::kRequeue, ActionOutcome::kDone, false)));  // before
  }

  json Run(SimTime since, SimTime until) {
    auto in = LoadReportInput(*history_, *service_, since, until);
    EXPECT_OK(in);
    if (!in.ok()) return json();
    return ReportToJson(BuildReport(*in));
  }

  TempDir dir_;
  std::unique_ptr<store::SqliteDb> db_;
  std::unique_ptr<store::SqliteHistoryStore> history_;
  std::unique_ptr<ServiceStore> service_;
};

const json* Row(const json& rows, const std::string& key, const std::string& value) {
  for (const auto& r : rows)
    if (r.value(key, "") == value) return &r;
  return nullptr;
}

TEST_F(ReportTest, GpuHoursByUserAndPartition) {
  const json r = Run(kT0, At(48));
  EXPECT_EQ(r["since"], kT0.seconds());
  EXPECT_EQ(r["until"], At(48).seconds());
  EXPECT_EQ(r["runs_in_period"], 5);
  EXPECT_EQ(r["unfinished_jobs"], 1);
  EXPECT_DOUBLE_EQ(r["gpu_hours"]["allocated"].get<double>(), 28.5);
  EXPECT_TRUE(r["gpu_hours"]["used"].is_null());  // nothing tracked utilisation: unknown
  EXPECT_DOUBLE_EQ(r["gpu_hours"]["tracked"].get<double>(), 0);
  ASSERT_EQ(r["by_user"].size(), 4u);
  const json expected_users[] = {{{"name", "alice"}, {"jobs", 2}, {"allocated_gpu_hours", 10.0}},
                                 {{"name", "bob"}, {"jobs", 1}, {"allocated_gpu_hours", 10.0}},
                                 {{"name", "carol"}, {"jobs", 1}, {"allocated_gpu_hours", 8.0}},
                                 {{"name", "erin"}, {"jobs", 1}, {"allocated_gpu_hours", 0.5}}};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const json& u = r["by_user"][i];
    EXPECT_EQ(u["name"], expected_users[i]["name"]);
    EXPECT_EQ(u["jobs"], expected_users[i]["jobs"]);
    EXPECT_DOUBLE_EQ(u["allocated_gpu_hours"].get<double>(),
                     expected_users[i]["allocated_gpu_hours"].get<double>());
    EXPECT_TRUE(u["used_gpu_hours"].is_null());
  }
  ASSERT_EQ(r["by_partition"].size(), 2u);
  EXPECT_EQ(r["by_partition"][0]["name"], "debug");
  EXPECT_DOUBLE_EQ(r["by_partition"][0]["allocated_gpu_hours"].get<double>(), 2.5);
  EXPECT_EQ(r["by_partition"][1]["name"], "gpu");
  EXPECT_DOUBLE_EQ(r["by_partition"][1]["allocated_gpu_hours"].get<double>(), 26);
  EXPECT_EQ(r["by_partition"][1]["jobs"], 3);
}

TEST_F(ReportTest, WasteByCategory) {
  const json r = Run(kT0, At(48));
  ASSERT_EQ(r["waste"].size(), 5u);
  const json* idle = Row(r["waste"], "category", "idle_gpus");
  const json* over = Row(r["waste"], "category", "over_requested");
  const json* failed = Row(r["waste"], "category", "failed_runs");
  const json* timeout = Row(r["waste"], "category", "time_limit_kills");
  const json* stalled = Row(r["waste"], "category", "stalled");
  ASSERT_TRUE(idle && over && failed && timeout && stalled);
  EXPECT_TRUE((*idle)["gpu_hours"].is_null());
  EXPECT_TRUE((*over)["gpu_hours"].is_null());
  EXPECT_DOUBLE_EQ((*failed)["gpu_hours"].get<double>(), 10);
  EXPECT_EQ((*failed)["jobs"], 1);
  EXPECT_DOUBLE_EQ((*timeout)["gpu_hours"].get<double>(), 2);
  EXPECT_DOUBLE_EQ((*stalled)["gpu_hours"].get<double>(), 4);  // 30 min x 8 GPUs
  EXPECT_EQ((*stalled)["jobs"], 1);
}

TEST_F(ReportTest, QueueingByPartition) {
  const json r = Run(kT0, At(48));
  ASSERT_EQ(r["queueing"].size(), 3u);
  const json& debug = r["queueing"][0];
  EXPECT_EQ(debug["partition"], "debug");
  EXPECT_EQ(debug["jobs"], 1);  // 103 started before the period
  EXPECT_DOUBLE_EQ(debug["avg_wait_s"].get<double>(), 0);
  const json& gpu = r["queueing"][1];
  EXPECT_EQ(gpu["partition"], "gpu");
  EXPECT_EQ(gpu["jobs"], 3);
  EXPECT_DOUBLE_EQ(gpu["avg_wait_s"].get<double>(), 3600);
  EXPECT_DOUBLE_EQ(gpu["p50_wait_s"].get<double>(), 3600);
  EXPECT_DOUBLE_EQ(gpu["p95_wait_s"].get<double>(), 6840);  // 3600 + 0.9 x 3600
  EXPECT_DOUBLE_EQ(gpu["max_wait_s"].get<double>(), 7200);
  const json& all = r["queueing"][2];
  EXPECT_EQ(all["partition"], "(all)");
  EXPECT_EQ(all["jobs"], 4);
  EXPECT_DOUBLE_EQ(all["avg_wait_s"].get<double>(), 2700);
  EXPECT_DOUBLE_EQ(all["p95_wait_s"].get<double>(), 6660);  // 3600 + 0.85 x 3600
}

TEST_F(ReportTest, FailuresAndActions) {
  const json r = Run(kT0, At(48));
  EXPECT_EQ(r["failures"]["infra"], 1);
  EXPECT_EQ(r["failures"]["app"], 1);
  EXPECT_EQ(r["failures"]["unknown"], 0);
  ASSERT_EQ(r["failures"]["by_cause"].size(), 2u);
  const json& app = r["failures"]["by_cause"][0];
  EXPECT_EQ(app["class"], "app");
  EXPECT_EQ(app["category"], "time_limit");
  EXPECT_DOUBLE_EQ(app["gpu_hours"].get<double>(), 3);  // the whole recorded run
  const json& infra = r["failures"]["by_cause"][1];
  EXPECT_EQ(infra["class"], "infra");
  EXPECT_EQ(infra["category"], "nccl_timeout");
  EXPECT_EQ(infra["failures"], 1);
  EXPECT_DOUBLE_EQ(infra["gpu_hours"].get<double>(), 10);
  ASSERT_EQ(r["actions"].size(), 2u);
  EXPECT_EQ(r["actions"][0]["kind"], "drain");
  EXPECT_EQ(r["actions"][0]["outcome"], "dry-run");
  EXPECT_EQ(r["actions"][0]["dry_run"], 1);
  EXPECT_EQ(r["actions"][1]["kind"], "requeue");
  EXPECT_EQ(r["actions"][1]["count"], 1);
  EXPECT_EQ(r["actions"][1]["dry_run"], 0);
}

TEST_F(ReportTest, PredictionAccuracy) {
  const json r = Run(kT0, At(48));
  const json& a = r["prediction_accuracy"];
  EXPECT_EQ(a["jobs"], 2);
  EXPECT_EQ(a["ended_without_prediction"], 1);  // 107
  EXPECT_EQ(a["not_completed"], 2);             // 102 failed, 103 timed out
  EXPECT_DOUBLE_EQ(a["within_2x"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(a["median_abs_log2_ratio"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(a["p10_p90_coverage"].get<double>(), 0.5);
}

TEST_F(ReportTest, TrackedUtilisationGivesUsedAndIdle) {
  auto in = LoadReportInput(*history_, *service_, kT0, At(48));
  ASSERT_OK(in);
  in->gpu_utilisation["101"] = 0.25;  // 8 GPU-h allocated, 2 used
  const json r = ReportToJson(BuildReport(*in));
  EXPECT_DOUBLE_EQ(r["gpu_hours"]["used"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(r["gpu_hours"]["tracked"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(r["by_user"][0]["used_gpu_hours"].get<double>(), 2);       // alice
  EXPECT_TRUE(r["by_user"][1]["used_gpu_hours"].is_null());                   // bob: unknown
  EXPECT_TRUE(r["by_partition"][0]["used_gpu_hours"].is_null());              // debug
  EXPECT_DOUBLE_EQ(r["by_partition"][1]["used_gpu_hours"].get<double>(), 2);  // gpu
  EXPECT_DOUBLE_EQ((*Row(r["waste"], "category", "idle_gpus"))["gpu_hours"].get<double>(), 6);
}

TEST_F(ReportTest, RecordedUsageProbesGiveTheUtilisation) {
  // 101 ran T0+1 h..T0+3 h; two probes (10% and 40%) in the period, one outside it.
  ASSERT_OK(service_->AddUsage({"101", At(1.5), 4, 0.10}));
  ASSERT_OK(service_->AddUsage({"101", At(2.5), 4, 0.40}));
  ASSERT_OK(service_->AddUsage({"101", At(60), 4, 1.0}));
  const json r = Run(kT0, At(48));
  EXPECT_DOUBLE_EQ(r["gpu_hours"]["tracked"].get<double>(), 8);
  EXPECT_NEAR(r["gpu_hours"]["used"].get<double>(), 8 * 0.25, 1e-9);
  EXPECT_NEAR((*Row(r["waste"], "category", "idle_gpus"))["gpu_hours"].get<double>(), 6, 1e-9);
  // Without probes in the period the job is unknown again.
  auto none = service_->MeanGpuUtilisation("101", At(3), At(48));
  ASSERT_OK(none);
  EXPECT_FALSE(none->has_value());
}

TEST_F(ReportTest, PeriodClipsRuns) {
  // [T0 + 2 h, T0 + 6 h): 101 ended at 3 h (1 h inside), 102 runs 2..7 h (4 h inside), 103 ended
  // at 2 h (nothing inside, but its end is the period's start: counted with 0 GPU-h).
  const json r = Run(At(2), At(6));
  EXPECT_DOUBLE_EQ(r["gpu_hours"]["allocated"].get<double>(), 4 * 1 + 2 * 4);
  EXPECT_EQ(r["runs_in_period"], 3);
  // 102's run is still going at the period's end, so its failure is not in it yet.
  EXPECT_EQ(r["failures"]["infra"], 0);
}

TEST_F(ReportTest, EmptyPeriodGivesZerosAndNulls) {
  const json r = Run(At(-100), At(-50));
  EXPECT_EQ(r["runs_in_period"], 0);
  EXPECT_EQ(r["unfinished_jobs"], 0);
  EXPECT_DOUBLE_EQ(r["gpu_hours"]["allocated"].get<double>(), 0);
  EXPECT_TRUE(r["by_user"].empty());
  EXPECT_TRUE(r["by_partition"].empty());
  ASSERT_EQ(r["queueing"].size(), 1u);
  EXPECT_EQ(r["queueing"][0]["jobs"], 0);
  EXPECT_TRUE(r["failures"]["by_cause"].empty());
  EXPECT_TRUE(r["actions"].empty());
  EXPECT_EQ(r["prediction_accuracy"]["jobs"], 0);
  EXPECT_TRUE(r["prediction_accuracy"]["within_2x"].is_null());
  EXPECT_TRUE(r["prediction_accuracy"]["median_abs_log2_ratio"].is_null());
  EXPECT_DOUBLE_EQ((*Row(r["waste"], "category", "failed_runs"))["gpu_hours"].get<double>(), 0);
  // The text and HTML forms render an empty report too.
  auto in = LoadReportInput(*history_, *service_, At(-100), At(-50));
  ASSERT_OK(in);
  const Report report = BuildReport(*in);
  EXPECT_NE(ReportToText(report).find("(none)"), std::string::npos);
  EXPECT_EQ(ReportToHtml(report).find("<svg"), std::string::npos);
}

TEST_F(ReportTest, HtmlEmbedsPlotsAndEscapesNames) {
  store::StoredJob odd = Job("109", "<script>", "gpu", 1, 1, 1, 1, JobState::kCompleted);
  ASSERT_OK(history_->PutJob(odd));
  auto in = LoadReportInput(*history_, *service_, kT0, At(48));
  ASSERT_OK(in);
  const std::string html = ReportToHtml(BuildReport(*in));
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  size_t svgs = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    ++svgs;
  EXPECT_EQ(svgs, 3u);  // GPU-hours per day, queueing CDF, prediction ratio CDF
}

TEST_F(ReportTest, LoadRefusesAnEmptyPeriod) {
  auto in = LoadReportInput(*history_, *service_, At(5), At(5));
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), StatusCode::kInvalidArgument);
}

TEST(ReportTimeTest, AcceptsDurationsDatesAndNow) {
  const SimTime now = kT0 + Duration::Hours(100);
  struct Case {
    const char* text;
    SimTime want;
  } cases[] = {
      {"7d", now - Duration::Hours(7 * 24)},
      {"36h", now - Duration::Hours(36)},
      {"90m", now - Duration::Minutes(90)},
      {"45s", now - Duration::Seconds(45)},
      {"2w", now - Duration::Hours(14 * 24)},
      {"now", now},
      {"2026-11-01", kT0},
      {"2026-11-01T06:30", kT0 + Duration::Minutes(390)},
      {"2026-11-01T06:30:15Z", kT0 + Duration::Seconds(390 * 60 + 15)},
      {"2024-02-29", SimTime::FromSeconds(1709164800)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto t = ParseReportTime(c.text, now, "--since");
    ASSERT_OK(t);
    EXPECT_EQ(t->micros(), c.want.micros());
  }
}

TEST(ReportTimeTest, RefusesOtherTextNamingTheFlag) {
  for (const char* bad :
       {"", "7", "d", "7x", "-3d", "7 d", "2026-11-31", "2025-02-29", "2026-13-01",
        "2026-11-01T24:00", "26-11-01", "2026/11/01", "99999999999d", "yesterday"}) {
    SCOPED_TRACE(bad);
    auto t = ParseReportTime(bad, kT0, "--since");
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find("--since"), std::string::npos);
  }
}

}  // namespace
}  // namespace schedmate::service
