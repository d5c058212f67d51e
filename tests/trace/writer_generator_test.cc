// Writer round trip, statistics, and the synthetic trace generator.

#include <gtest/gtest.h>

#include <string>

#include "core/file_util.h"
#include "testing/test_util.h"
#include "trace/cluster_config.h"
#include "trace/trace_generator.h"
#include "trace/trace_reader.h"
#include "trace/trace_stats.h"
#include "trace/trace_writer.h"

namespace schedmate::trace {
namespace {

using ::schedmate::testing::TempDir;
using ::schedmate::testing::TestDataPath;

void ExpectSameJobs(const JobTable& a, const JobTable& b) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    SCOPED_TRACE(i);
    const JobRecord& x = a.jobs[i];
    const JobRecord& y = b.jobs[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.user, y.user);
    EXPECT_EQ(x.vc, y.vc);
    EXPECT_EQ(x.gpus, y.gpus);
    EXPECT_EQ(x.cpus, y.cpus);
    EXPECT_EQ(x.state, y.state);
    EXPECT_EQ(x.submit, y.submit);
    EXPECT_EQ(x.duration, y.duration);
    EXPECT_EQ(x.dataset, y.dataset);
    EXPECT_EQ(x.model, y.model);
    EXPECT_EQ(x.batch_size, y.batch_size);
    EXPECT_EQ(x.amp, y.amp);
    EXPECT_EQ(x.speed, y.speed);
    EXPECT_EQ(x.gpu_util, y.gpu_util);
    EXPECT_EQ(x.gmem_util, y.gmem_util);
    EXPECT_EQ(x.gmem_mib, y.gmem_mib);
  }
}

TEST(TraceWriterTest, RoundTripIsExact) {
  auto a = ReadTrace(TestDataPath("trace/lucid_jobs.csv"));
  ASSERT_OK(a);
  // Awkward values: quotes and commas, sub-second times, fractional GPUs, unknown amp.
  a->jobs[0].user = "quoted \"user\", with comma";
  a->jobs[0].submit = SimTime::FromMicros(1'234'567);
  a->jobs[0].duration = Duration::Micros(10);
  a->jobs[1].gpus = GpuAmount::Milli(460);
  a->jobs[1].amp = -1;
  a->jobs[1].speed = 0.1 + 0.2;  // not exactly representable in short decimal
  a->jobs[2].state = JobState::kUnknown;
  TempDir dir;
  ASSERT_OK(WriteLucidCsv(*a, dir.File("out.csv")));
  auto b = ReadTrace(dir.File("out.csv"));
  ASSERT_OK(b);
  EXPECT_EQ(b->format, TraceFormat::kLucid);
  ExpectSameJobs(*a, *b);
  // Writing what was read gives the same bytes again.
  EXPECT_EQ(FormatLucidCsv(*a), FormatLucidCsv(*b));
}

TEST(TraceWriterTest, FormatsNumbersReadably) {
  JobTable t;
  JobRecord j;
  j.id = "7";
  j.gpus = GpuAmount::Milli(500);
  j.submit = SimTime::FromMicros(2'500'000);
  j.duration = Duration::Seconds(60);
  t.jobs.push_back(j);
  EXPECT_EQ(FormatLucidCsv(t),
            "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s,dataset,model,batchsize,"
            "amp,speed,gpu_util,gmem_util,gmem\n"
            "7,,,0.5,0,UNKNOWN,2.5,60,,,0,,0,0,0,0\n");
}

TEST(TraceWriterTest, ConvertsOtherFormats) {
  auto g = ReadTrace(TestDataPath("trace/gpw.csv"));
  ASSERT_OK(g);
  auto back = ParseTrace(FormatLucidCsv(*g), "conv.csv");
  ASSERT_OK(back);
  ExpectSameJobs(*g, *back);
}

TEST(TraceStatsTest, CountsBucketsAndPercentiles) {
  auto t = ReadTrace(TestDataPath("trace/lucid_jobs.csv"));
  ASSERT_OK(t);
  TraceStats s = ComputeTraceStats(*t);
  EXPECT_EQ(s.jobs, 5);
  EXPECT_EQ(s.users, 4);
  EXPECT_EQ(s.vcs, 2);
  EXPECT_EQ(s.first_submit, SimTime::Zero());
  EXPECT_EQ(s.last_submit, SimTime::FromSeconds(200));
  EXPECT_DOUBLE_EQ(s.mean_interarrival_s, 50.0);
  // Buckets: 0, <1, 1, 2, 3-4, 5-8, >8 for gpus 1, 8, 2, 16, 0.5.
  std::vector<int64_t> want = {0, 1, 1, 1, 0, 1, 1};
  ASSERT_EQ(s.gpu_histogram.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(s.gpu_histogram[i].second, want[i]) << i;
  EXPECT_EQ(s.gpu_histogram[1].first, "<1");
  // Durations sorted: 1, 45, 120, 7200, 86400 -> p50 rank 3 = 120, p90 rank 5, p99 rank 5.
  EXPECT_EQ(s.p50, Duration::Seconds(120));
  EXPECT_EQ(s.p90, Duration::Seconds(86400));
  EXPECT_EQ(s.p99, Duration::Seconds(86400));
  EXPECT_EQ(s.mean, Duration::Micros((1 + 45 + 120 + 7200 + 86400) * 1'000'000LL / 5));
  const double gpu_hours = (120 * 1 + 7200 * 8 + 45 * 2 + 86400 * 16 + 1 * 0.5) / 3600.0;
  EXPECT_NEAR(s.gpu_hours, gpu_hours, 1e-9);
  ASSERT_EQ(s.states.size(), 5u);
  EXPECT_EQ(s.states[0].first, "COMPLETED");
}

TEST(TraceStatsTest, EmptyTable) {
  JobTable t;
  TraceStats s = ComputeTraceStats(t);
  EXPECT_EQ(s.jobs, 0);
  EXPECT_EQ(s.p50, Duration::Zero());
  EXPECT_EQ(s.gpu_hours, 0);
}

JobTable SourceForGeneration() {
  // 200 jobs: gaps alternate 10 s and 30 s (mean 20), gpus 1 or 8, durations 100 or 1000 s,
  // with 8-GPU jobs always the long ones (a joint distribution to preserve).
  JobTable t;
  t.source = "synthetic-source";
  t.format = TraceFormat::kLucid;
  int64_t clock = 0;
  for (int i = 0; i < 200; ++i) {
    JobRecord j;
    j.id = std::to_string(i);
    j.user = i % 3 == 0 ? "u0" : "u1";
    j.vc = i % 2 == 0 ? "vcA" : "vcB";
    const bool big = i % 4 == 0;
    j.gpus = GpuAmount::Whole(big ? 8 : 1);
    j.duration = Duration::Seconds(big ? 1000 : 100);
    j.submit = SimTime::FromSeconds(clock);
    clock += i % 2 == 0 ? 10 : 30;
    t.jobs.push_back(j);
  }
  return t;
}

TEST(TraceGeneratorTest, SameSeedSameBytesDifferentSeedDifferent) {
  JobTable src = SourceForGeneration();
  GenerateOptions o;
  o.jobs = 500;
  o.seed = 42;
  auto a = GenerateTrace(src, o);
  auto b = GenerateTrace(src, o);
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(FormatLucidCsv(a->table), FormatLucidCsv(b->table));
  o.seed = 43;
  auto c = GenerateTrace(src, o);
  ASSERT_OK(c);
  EXPECT_NE(FormatLucidCsv(a->table), FormatLucidCsv(c->table));
}

TEST(TraceGeneratorTest, PreservesJointDistributionAndScalesArrivals) {
  JobTable src = SourceForGeneration();
  GenerateOptions o;
  o.jobs = 20000;
  o.seed = 7;
  o.load_factor = 2.0;
  auto g = GenerateTrace(src, o);
  ASSERT_OK(g);
  const JobTable& t = g->table;
  ASSERT_EQ(t.jobs.size(), 20000u);
  EXPECT_EQ(t.jobs[0].submit, SimTime::Zero());
  EXPECT_EQ(t.jobs[0].id, "1");
  int big = 0;
  for (const auto& j : t.jobs) {
    ASSERT_EQ(j.gpus == GpuAmount::Whole(8), j.duration == Duration::Seconds(1000));  // joint
    big += j.gpus == GpuAmount::Whole(8);
  }
  EXPECT_NEAR(big / 20000.0, 0.25, 0.02);
  TraceStats s = ComputeTraceStats(t);
  EXPECT_NEAR(s.mean_interarrival_s, 10.0, 0.5);  // source mean gap 20 s / L = 2
  // Submit times are nondecreasing (ids in arrival order).
  for (size_t i = 1; i < t.jobs.size(); ++i) ASSERT_LE(t.jobs[i - 1].submit, t.jobs[i].submit);
  // Offered load: mean(g*d) = 0.25*8000 + 0.75*100 = 2075 GPU-s per 20 s -> 103.75 GPUs.
  EXPECT_NEAR(g->source_offered_gpus, 2075.0 / (3970.0 / 199.0), 1e-9);
  EXPECT_NEAR(g->offered_gpus, 2 * g->source_offered_gpus, 1e-9);
}

TEST(TraceGeneratorTest, SpanAndClusterScalings) {
  JobTable src = SourceForGeneration();
  GenerateOptions span;
  span.jobs = 5001;
  span.span_days = 1;
  auto a = GenerateTrace(src, span);
  ASSERT_OK(a);
  const double days = a->table.jobs.back().submit.seconds_f() / 86400.0;
  EXPECT_NEAR(days, 1.0, 0.05);

  GenerateOptions cluster;
  cluster.jobs = 100;
  cluster.cluster_gpus = 1000;
  cluster.target_load = 0.5;
  cluster.single_vc = "all";
  auto c = GenerateTrace(src, cluster);
  ASSERT_OK(c);
  EXPECT_NEAR(c->offered_gpus, 500.0, 1e-6);
  for (const auto& j : c->table.jobs) ASSERT_EQ(j.vc, "all");
}

TEST(TraceGeneratorTest, RejectsBadInputs) {
  JobTable src = SourceForGeneration();
  GenerateOptions both;
  both.load_factor = 2;
  both.span_days = 3;
  EXPECT_FALSE(GenerateTrace(src, both).ok());
  GenerateOptions zero;
  zero.load_factor = 0;
  EXPECT_FALSE(GenerateTrace(src, zero).ok());
  JobTable one;
  one.jobs.push_back(src.jobs[0]);
  EXPECT_FALSE(GenerateTrace(one, {}).ok());
  JobTable pollux = src;
  pollux.format = TraceFormat::kPollux;
  for (auto& j : pollux.jobs) j.duration = Duration::Zero();  // as the Pollux reader leaves them
  auto r = GenerateTrace(pollux, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no job durations"), std::string::npos);
  JobTable same_time = src;
  for (auto& j : same_time.jobs) j.submit = SimTime::Zero();
  EXPECT_FALSE(GenerateTrace(same_time, {}).ok());
}

TEST(TraceGeneratorTest, VcConfigSplitsNodesByDemand) {
  JobTable src = SourceForGeneration();
  // vcA holds all the 8-GPU jobs (even i with i % 4 == 0) plus half the small ones.
  auto cfg = FormatVcConfigFor(src, 800, 8);
  ASSERT_OK(cfg);
  auto spec = ParseVcConfig(*cfg, "generated");
  ASSERT_OK(spec);
  ASSERT_EQ(spec->vcs.size(), 2u);
  EXPECT_EQ(spec->vcs[0].name, "vcA");
  EXPECT_EQ(spec->vcs[0].nodes + spec->vcs[1].nodes, 100);
  // Demand: vcA = 50*8000 + 50*100 = 405000; vcB = 100*100 = 10000 -> 97.6 / 2.4 nodes.
  EXPECT_EQ(spec->vcs[0].nodes, 98);
  EXPECT_EQ(spec->vcs[1].nodes, 2);
  EXPECT_FALSE(FormatVcConfigFor(src, 4, 8).ok());
}

}  // namespace
}  // namespace schedmate::trace
