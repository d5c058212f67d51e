// The real traces under /work/shared/traces (skipped cleanly when absent): every file of every
// format parses with 0 errors, and the counts match traces/README.md.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "testing/test_util.h"
#include "trace/cluster_config.h"
#include "trace/estimates.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {

namespace fs = std::filesystem;

TEST(SharedTracesTest, VenusJobs) {
  SM_SKIP_WITHOUT_SHARED(path, "traces/venus_sept2020_lucid/venus_sept2020_jobs.csv");
  auto r = ReadTrace(path);
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kLucid);
  EXPECT_EQ(r->jobs.size(), 23'859u);
  EXPECT_EQ(r->rows_skipped, 0);
  std::set<std::string> users, vcs;
  double gpu_hours = 0;
  int completed = 0;
  for (const auto& j : r->jobs) {
    users.insert(j.user);
    vcs.insert(j.vc);
    gpu_hours += j.gpus.as_double() * j.duration.seconds_f() / 3600.0;
    completed += j.state == JobState::kCompleted;
  }
  EXPECT_EQ(users.size(), 118u);
  EXPECT_EQ(vcs.size(), 15u);
  EXPECT_EQ(completed, 13'281);
  EXPECT_NEAR(gpu_hours, 601'983, 1);
  EXPECT_EQ(r->jobs.front().id, "765472");
  EXPECT_EQ(r->jobs.front().submit, SimTime::FromSeconds(3));
  EXPECT_EQ(r->jobs.front().duration, Duration::Seconds(97));
  // File order is kept and is nondecreasing in submit time.
  for (size_t i = 1; i < r->jobs.size(); ++i) {
    ASSERT_LE(r->jobs[i - 1].submit, r->jobs[i].submit) << i;
  }
}

TEST(SharedTracesTest, VenusClusterFullLogMatchesJobsFile) {
  SM_SKIP_WITHOUT_SHARED(full, "traces/venus_sept2020_lucid/cluster_full_log.csv");
  SM_SKIP_WITHOUT_SHARED(jobs, "traces/venus_sept2020_lucid/venus_sept2020_jobs.csv");
  auto a = ReadTrace(full);
  auto b = ReadTrace(jobs);
  ASSERT_OK(a);
  ASSERT_OK(b);
  ASSERT_EQ(a->jobs.size(), 23'860u);  // + the anchor row
  EXPECT_EQ(a->jobs[0].user, "anchor_user_not_in_trace");
  // Same jobs; the order of submit-time ties differs by design (README: the full log is ordered
  // for pandas' unstable sort, the jobs file in Lucid's processing order).
  std::map<std::string, const JobRecord*> by_id;
  for (const auto& j : a->jobs) by_id[j.id] = &j;
  ASSERT_EQ(by_id.size(), 23'860u);
  for (size_t i = 0; i < b->jobs.size(); ++i) {
    const auto& y = b->jobs[i];
    ASSERT_TRUE(by_id.count(y.id)) << y.id;
    const auto& x = *by_id[y.id];
    ASSERT_EQ(x.submit, y.submit + Duration::Seconds(13'219'200)) << i;
    ASSERT_EQ(x.duration, y.duration) << i;
    ASSERT_EQ(x.gpus, y.gpus) << i;
  }
}

TEST(SharedTracesTest, VenusVcConfigAndEstimates) {
  SM_SKIP_WITHOUT_SHARED(vc, "traces/venus_sept2020_lucid/lucid_aux/vc_config.csv");
  auto spec = ReadVcConfig(vc);
  ASSERT_OK(spec);
  EXPECT_EQ(spec->vcs.size(), 15u);
  int nodes = 0;
  for (const auto& v : spec->vcs) nodes += v.nodes;
  EXPECT_EQ(nodes, 135);
  EXPECT_EQ(spec->total_gpus(), 1080);

  SM_SKIP_WITHOUT_SHARED(jobs, "traces/venus_sept2020_lucid/venus_sept2020_jobs.csv");
  SM_SKIP_WITHOUT_SHARED(lgb, "traces/venus_sept2020_lucid/lucid_aux/Venus_Sept_lgb.csv");
  SM_SKIP_WITHOUT_SHARED(ebm,
                         "traces/venus_sept2020_lucid/lucid_aux/Venus_Sept_ebm_weekly_updated.csv");
  auto table = ReadTrace(jobs);
  ASSERT_OK(table);
  auto l = ReadEstimates(lgb);
  ASSERT_OK(l);
  EXPECT_EQ(l->size(), 23'859u);
  auto ls = ApplyEstimates(*table, *l);
  EXPECT_EQ(ls.matched, 23'859);
  EXPECT_EQ(ls.missing, 0);
  auto e = ReadEstimates(ebm);
  ASSERT_OK(e);
  EXPECT_EQ(e->size(), 23'873u);
  auto es = ApplyEstimates(*table, *e);
  EXPECT_EQ(es.matched + es.missing, 23'859);
  EXPECT_EQ(es.missing, 0);
  EXPECT_EQ(es.unused, 14);
  EXPECT_GT(es.negative, 0);
  for (const auto& j : table->jobs) ASSERT_GE(*j.estimate, Duration::Zero());
}

// Every file of a folder parses without error; sums the skip counts of the files with jobs.
void ExpectFolderParses(const std::string& folder, TraceFormat want, int64_t* skipped,
                        size_t* files) {
  *skipped = 0;
  *files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    const std::string p = entry.path().string();
    if (entry.path().extension() != ".csv" && entry.path().extension() != ".trace" &&
        entry.path().extension() != ".swf") {
      continue;
    }
    if (p.find("node_list") != std::string::npos) continue;
    SCOPED_TRACE(p);
    auto r = ReadTrace(p);
    ASSERT_OK(r);
    EXPECT_EQ(r->format, want);
    if (p.find("multigpu") != std::string::npos) continue;  // checked separately
    EXPECT_GT(r->jobs.size(), 0u);
    *skipped += r->rows_skipped;
    ++*files;
  }
}

TEST(SharedTracesTest, EveryFileOfEveryFormatParses) {
  SM_SKIP_WITHOUT_SHARED(root, "traces");
  struct Folder {
    const char* dir;
    TraceFormat format;
    int64_t expected_skips;  // documented unusable rows
    size_t expected_files;
  } folders[] = {
      {"helios_gpw_15k", TraceFormat::kGpw, 0, 1},
      {"philly_gpw_15k", TraceFormat::kGpw, 0, 1},
      {"bluewaters_gpw_15k", TraceFormat::kGpw, 0, 1},
      {"theta_gpw_15k", TraceFormat::kGpw, 0, 1},
      {"philly_chronus", TraceFormat::kChronus, 0, 3},
      {"philly_gavel_msr", TraceFormat::kGavel, 0, 75},
      {"pollux_workloads", TraceFormat::kPollux, 0, 40},
      {"sia_workloads", TraceFormat::kPollux, 0, 28},
      {"swf_lublin_synthetic", TraceFormat::kSwf, 0, 2},
  };
  for (const auto& f : folders) {
    SCOPED_TRACE(f.dir);
    int64_t skipped = 0;
    size_t files = 0;
    ExpectFolderParses(root + "/" + f.dir, f.format, &skipped, &files);
    EXPECT_EQ(skipped, f.expected_skips);
    EXPECT_EQ(files, f.expected_files);
  }
}

TEST(SharedTracesTest, GpwCountsMatchReadme) {
  SM_SKIP_WITHOUT_SHARED(helios, "traces/helios_gpw_15k/helios_data_training.csv");
  auto r = ReadTrace(helios);
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs.size(), 15'000u);
  int pass = 0, killed = 0, failed = 0;
  for (const auto& j : r->jobs) {
    pass += j.state == JobState::kCompleted;
    killed += j.state == JobState::kCancelled;
    failed += j.state == JobState::kFailed;
  }
  EXPECT_EQ(pass, 9'316);
  EXPECT_EQ(killed, 3'452);
  EXPECT_EQ(failed, 2'232);
}

TEST(SharedTracesTest, Sdsc95SkipsOnlyUnknownRunTimes) {
  SM_SKIP_WITHOUT_SHARED(path, "traces/sdsc95_gpw/SDSC_95.csv");
  auto r = ReadTrace(path);
  ASSERT_OK(r);
  EXPECT_EQ(r->rows_read, 76'872);
  EXPECT_EQ(static_cast<int64_t>(r->jobs.size()) + r->rows_skipped, 76'872);
  EXPECT_EQ(r->rows_skipped, 15);  // Run_Time -1
  for (const auto& reason : r->skip_reasons) {
    EXPECT_NE(reason.find("run time unknown"), std::string::npos) << reason;
  }
}

TEST(SharedTracesTest, ChronusAndTiresias) {
  SM_SKIP_WITHOUT_SHARED(mix1, "traces/philly_chronus/trace_job_Philly_MIX1.csv");
  auto r = ReadTrace(mix1);
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs.size(), 30'940u);
  std::set<std::string> vcs;
  for (const auto& j : r->jobs) vcs.insert(j.vc);
  EXPECT_EQ(vcs.size(), 11u);
  SM_SKIP_WITHOUT_SHARED(t60, "traces/tiresias_sim/60_job.csv");
  auto t = ReadTrace(t60);
  ASSERT_OK(t);
  EXPECT_EQ(t->jobs.size(), 60u);
  SM_SKIP_WITHOUT_SHARED(tf, "traces/tiresias_sim/tf_job.csv");
  auto tfr = ReadTrace(tf);
  ASSERT_OK(tfr);
  EXPECT_EQ(tfr->jobs.size(), 2u);
}

TEST(SharedTracesTest, GavelSeedHas15264Jobs) {
  SM_SKIP_WITHOUT_SHARED(seed, "traces/philly_gavel_msr/seed=0");
  size_t jobs = 0;
  std::map<int64_t, int> by_gpus;
  for (const auto& e : fs::directory_iterator(seed)) {
    auto r = ReadTrace(e.path().string());
    ASSERT_OK(r);
    jobs += r->jobs.size();
    for (const auto& j : r->jobs) by_gpus[j.gpus.milli() / 1000]++;
  }
  EXPECT_EQ(jobs, 15'264u);
}

TEST(SharedTracesTest, OpenbPodListsSkipNothingAndCountPods) {
  SM_SKIP_WITHOUT_SHARED(def, "traces/alibaba_gpu_v2023_openb/openb_pod_list_default.csv");
  auto r = ReadTrace(def);
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs.size(), 8'152u);
  EXPECT_EQ(r->rows_skipped, 0);
  SM_SKIP_WITHOUT_SHARED(dir, "traces/alibaba_gpu_v2023_openb");
  int64_t skipped = 0;
  size_t files = 0;
  ExpectFolderParses(dir, TraceFormat::kOpenb, &skipped, &files);
  // 24 pod lists; the four multigpu* lists have no time columns (all rows skipped, not counted).
  EXPECT_EQ(files, 20u);
  SM_SKIP_WITHOUT_SHARED(multi, "traces/alibaba_gpu_v2023_openb/openb_pod_list_multigpu20.csv");
  auto m = ReadTrace(multi);
  ASSERT_OK(m);
  EXPECT_EQ(m->format, TraceFormat::kOpenb);
  EXPECT_EQ(m->jobs.size(), 0u);
  EXPECT_GT(m->rows_skipped, 0);
  EXPECT_EQ(m->rows_skipped, m->rows_read);
}

TEST(SharedTracesTest, SwfLublin) {
  SM_SKIP_WITHOUT_SHARED(path, "traces/swf_lublin_synthetic/lublin_256.swf");
  auto r = ReadTrace(path);
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs.size(), 10'000u);
}

}  // namespace
}  // namespace schedmate::trace
