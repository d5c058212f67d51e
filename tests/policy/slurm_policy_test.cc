// The slurm policy (multifactor priority + backfill planned on time limits) and its slurm.conf
// reader, on hand-made clusters.

#include "policy/slurm_policy.h"

#include <gtest/gtest.h>

#include <string>

#include "policy/slurm_config.h"
#include "sim/job_builder.h"

namespace schedmate::policy {
namespace {

using ::schedmate::testing::JobBuilder;
using ::schedmate::testing::OneVc;
using ::schedmate::testing::RunPolicy;
using ::schedmate::testing::Table;

int64_t StartOf(const sim::SimResult& r, size_t i) {
  return r.jobs[i].first_start.micros() / 1'000'000;
}

Result<sim::SimResult> RunSlurm(const JobTable& t, const SlurmConfig& c, int32_t nodes = 1) {
  PolicyConfig pc;
  pc.slurm = &c;
  return RunPolicy("slurm", t, OneVc(nodes), pc);
}

// A (4 GPUs) runs; B (8 GPUs) is blocked at the head with a reservation at A's LIMIT (200 s);
// C (4 GPUs, 10 s of work) may use A's other 4 GPUs only if its own limit ends before then.
JobTable BackfillTable(int64_t c_limit) {
  return Table({JobBuilder().User("a").Gpus(4).SubmitAt(0).Runtime(100).Limit(200),
                JobBuilder().User("b").Gpus(8).SubmitAt(1).Runtime(100).Limit(200),
                JobBuilder().User("c").Gpus(4).SubmitAt(2).Runtime(10).Limit(c_limit)});
}

TEST(SlurmPolicyTest, BackfillPlansOnTimeLimitsNotDurations) {
  struct Case {
    const char* name;
    int64_t c_limit;
    int64_t bf_interval;
    int64_t want_c_start;
  };
  const Case cases[] = {
      // C's limit ends at 32 + 50 < 200: backfilled at the next pass, bf_interval after B's.
      {"short limit, default interval", 50, 30, 31},
      {"short limit, 1 s interval", 50, 1, 2},
      // C's limit (300 s) would pass B's reservation: it waits although its 10 s of real work
      // would fit; B starts when A truly ends (100), C when B ends (200).
      {"long limit waits", 300, 1, 200},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    SlurmConfig cfg;
    ASSERT_OK(ApplySlurmSetting(cfg, "bf_interval", std::to_string(c.bf_interval)));
    auto r = RunSlurm(BackfillTable(c.c_limit), cfg);
    ASSERT_OK(r);
    EXPECT_EQ(StartOf(*r, 0), 0);
    EXPECT_EQ(StartOf(*r, 1), 100);
    EXPECT_EQ(StartOf(*r, 2), c.want_c_start);
  }
}

TEST(SlurmPolicyTest, BuiltinSchedulerNeverBackfills) {
  SlurmConfig cfg;
  ASSERT_OK(ApplySlurmSetting(cfg, "SchedulerType", "sched/builtin"));
  auto r = RunSlurm(BackfillTable(50), cfg);
  ASSERT_OK(r);
  EXPECT_EQ(StartOf(*r, 1), 100);
  EXPECT_EQ(StartOf(*r, 2), 200);  // strictly after B
}

TEST(SlurmPolicyTest, BackfillWindowLimitsReservations) {
  // With a 1-minute window B's reservation (at 200 s) is out of the window, so nothing protects
  // it and C (limit 300 s) is backfilled at once.
  SlurmConfig cfg;
  ASSERT_OK(ApplySlurmSetting(cfg, "bf_interval", "1"));
  ASSERT_OK(ApplySlurmSetting(cfg, "bf_window", "1"));
  auto r = RunSlurm(BackfillTable(300), cfg);
  ASSERT_OK(r);
  EXPECT_EQ(StartOf(*r, 2), 2);
}

TEST(SlurmPolicyTest, JobSizeWeightAndFavorSmall) {
  // One busy 8-GPU node until 100 s; then a small (1 GPU) and a large (8 GPU) job wait. Only
  // the size factor differs; the one with the higher priority starts at 100.
  for (bool favor_small : {false, true}) {
    SCOPED_TRACE(favor_small ? "favor small" : "favor large");
    SlurmConfig cfg;
    cfg.weight_job_size = 1000;
    cfg.favor_small = favor_small;
    cfg.backfill = false;
    JobTable t = Table({JobBuilder().User("x").Gpus(8).SubmitAt(0).Runtime(100).Limit(100),
                        JobBuilder().User("s").Gpus(1).SubmitAt(1).Runtime(50).Limit(100),
                        JobBuilder().User("l").Gpus(8).SubmitAt(2).Runtime(50).Limit(100)});
    auto r = RunSlurm(t, cfg);
    ASSERT_OK(r);
    if (favor_small) {
      EXPECT_EQ(StartOf(*r, 1), 100);
      EXPECT_EQ(StartOf(*r, 2), 150);
    } else {
      EXPECT_EQ(StartOf(*r, 2), 100);
      EXPECT_EQ(StartOf(*r, 1), 150);
    }
  }
}

TEST(SlurmPolicyTest, FairShareFavoursTheUserWhoUsedLess) {
  // "heavy" used the node for 1000 s; then heavy and light each submit, heavy first. With a
  // fair-share weight light goes first; without it, submit order.
  for (int64_t w : {0, 10000}) {
    SCOPED_TRACE(w);
    SlurmConfig cfg;
    cfg.weight_fairshare = w;
    cfg.backfill = false;
    JobTable t = Table({JobBuilder().User("heavy").Gpus(8).SubmitAt(0).Runtime(1000).Limit(1000),
                        JobBuilder().User("light").Gpus(8).SubmitAt(0).Runtime(1).Limit(1),
                        JobBuilder().User("heavy").Gpus(8).SubmitAt(1500).Runtime(1000).Limit(1000),
                        JobBuilder().User("blocker").Gpus(8).SubmitAt(1500).Runtime(100).Limit(100),
                        JobBuilder().User("heavy").Gpus(8).SubmitAt(1501).Runtime(10).Limit(10),
                        JobBuilder().User("light").Gpus(8).SubmitAt(1502).Runtime(10).Limit(10)});
    auto r = RunSlurm(t, cfg);
    ASSERT_OK(r);
    const int64_t heavy = StartOf(*r, 4), light = StartOf(*r, 5);
    if (w == 0) {
      EXPECT_LT(heavy, light);
    } else {
      EXPECT_LT(light, heavy);
    }
  }
}

TEST(SlurmPolicyTest, SameInputSameResult) {
  SlurmConfig cfg;
  cfg.weight_age = 1000;
  cfg.weight_fairshare = 1000;
  cfg.weight_job_size = 100;
  JobTable t;
  for (int i = 0; i < 200; ++i) {
    t.jobs.push_back(JobBuilder()
                         .Id("j" + std::to_string(i))
                         .User("u" + std::to_string(i % 7))
                         .Gpus(1 << (i % 4))
                         .SubmitAt(i * 13)
                         .Runtime(50 + (i * 37) % 400)
                         .Limit(500)
                         .Build());
  }
  auto a = RunSlurm(t, cfg, 2);
  auto b = RunSlurm(t, cfg, 2);
  ASSERT_OK(a);
  ASSERT_OK(b);
  ASSERT_EQ(a->jobs.size(), b->jobs.size());
  for (size_t i = 0; i < a->jobs.size(); ++i) {
    EXPECT_EQ(a->jobs[i].first_start, b->jobs[i].first_start);
    EXPECT_TRUE(a->jobs[i].finished());
  }
}

// --- slurm.conf ---------------------------------------------------------------------------------

TEST(SlurmConfigTest, ReadsWeightsSchedulerAndNodes) {
  const std::string conf =
      "ClusterName=ci  # comment\n"
      "SchedulerType=sched/backfill\n"
      "SchedulerParameters=batch_sched_delay=0,bf_window=2880,bf_max_job_test=50,bf_interval=10,"
      "bf_continue\n"
      "PriorityType=priority/multifactor\n"
      "PriorityWeightAge=1000\nPriorityWeightFairshare=5000\nPriorityWeightJobSize=10\n"
      "PriorityWeightPartition=20\nPriorityWeightQOS=30\nPriorityMaxAge=1-00:00\n"
      "PriorityDecayHalfLife=14-0\nPriorityFavorSmall=YES\nPriorityWeightTRES=cpu=1\n"
      "NodeName=gpu[01-04] Gres=gpu:a100:8 CPUs=64\n"
      "NodeName=big Gres=gpu:8\n"
      "NodeName=cpu[1-2] CPUs=8\n"
      "PartitionName=gpu Nodes=ALL Default=YES PriorityJobFactor=10\n"
      "PartitionName=debug Nodes=big\n";
  auto r = ParseSlurmConf(conf, "slurm.conf");
  ASSERT_OK(r);
  const SlurmConfig& c = r->config;
  EXPECT_TRUE(c.backfill);
  EXPECT_EQ(c.bf_window, Duration::Minutes(2880));
  EXPECT_EQ(c.bf_max_job_test, 50);
  EXPECT_EQ(c.bf_interval, Duration::Seconds(10));
  EXPECT_TRUE(c.bf_continue);
  EXPECT_EQ(c.weight_age, 1000);
  EXPECT_EQ(c.weight_fairshare, 5000);
  EXPECT_EQ(c.weight_job_size, 10);
  EXPECT_EQ(c.weight_partition, 20);
  EXPECT_EQ(c.weight_qos, 30);
  EXPECT_EQ(c.max_age, Duration::Hours(24));
  EXPECT_EQ(c.decay_half_life, Duration::Hours(14 * 24));
  EXPECT_TRUE(c.favor_small);
  EXPECT_EQ(c.partition_factor.at("gpu"), 10);
  EXPECT_EQ(r->nodes.nodes, 7);
  EXPECT_EQ(r->nodes.gpus_per_node, 8);
  EXPECT_EQ(r->nodes.total_gpus, 40);
  EXPECT_TRUE(r->nodes.heterogeneous);  // the CPU nodes have none
  EXPECT_EQ(r->nodes.partitions.size(), 2u);
  EXPECT_FALSE(c.unmodelled.empty());  // PriorityWeightTRES, batch_sched_delay
}

TEST(SlurmConfigTest, GresConfGivesCountsWhenNodeLinesHaveNone) {
  auto r = ParseSlurmConf("NodeName=gpu1 CPUs=8\nNodeName=gpu2 CPUs=8\n", "slurm.conf",
                          "AutoDetect=off\nNodeName=gpu1 Name=gpu File=/dev/nvidia[0-3]\n"
                          "NodeName=gpu2 Name=gpu Count=4\n",
                          "gres.conf");
  ASSERT_OK(r);
  EXPECT_EQ(r->nodes.nodes, 2);
  EXPECT_EQ(r->nodes.gpus_per_node, 4);
  EXPECT_EQ(r->nodes.total_gpus, 8);
}

TEST(SlurmConfigTest, UnknownKeysThatMatterAreErrorsNamingTheLine) {
  struct Case {
    const char* name;
    const char* conf;
    const char* where;
  };
  const Case cases[] = {
      {"unknown priority key", "ClusterName=x\nPriorityWeightMoon=5\n", "slurm.conf:2"},
      {"unknown scheduler option", "SchedulerParameters=bf_window=10,bf_magic=3\n", "slurm.conf:1"},
      {"bad weight", "\n\nPriorityWeightAge=lots\n", "slurm.conf:3"},
      {"bad bf_window", "SchedulerParameters=bf_window=0\n", "slurm.conf:1"},
      {"unmodelled scheduler", "SchedulerType=sched/hold\n", "slurm.conf:1"},
      {"bad node range", "NodeName=gpu[4-1] Gres=gpu:8\n", "slurm.conf:1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParseSlurmConf(c.conf, "slurm.conf");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.where), std::string::npos) << r.status().message();
  }
  // Unrelated keys are ignored.
  EXPECT_OK(ParseSlurmConf("AuthType=auth/munge\nSlurmctldPort=1\nMailProg=/bin/true\n", "s"));
}

TEST(SlurmConfigTest, SettingsAndConfLinesRoundTrip) {
  SlurmConfig c;
  ASSERT_OK(ApplySlurmSetting(c, "PriorityWeightAge", "123"));
  ASSERT_OK(ApplySlurmSetting(c, "bf_window", "60"));
  ASSERT_OK(ApplySlurmSetting(c, "qos.high", "100"));
  EXPECT_FALSE(ApplySlurmSetting(c, "PriorityWeightAge", "-1").ok());
  EXPECT_FALSE(ApplySlurmSetting(c, "NoSuchKey", "1").ok());
  std::string text;
  for (const auto& l : SlurmConfLines(c)) text += l + "\n";
  auto r = ParseSlurmConf(text, "lines");
  ASSERT_OK(r);
  EXPECT_EQ(r->config.weight_age, 123);
  EXPECT_EQ(r->config.bf_window, Duration::Minutes(60));
}

TEST(SlurmConfigTest, HostLists) {
  EXPECT_EQ(*CountHostList("gpu[01-04,7],login"), 6);
  EXPECT_EQ(*CountHostList("a,b,c"), 3);
  EXPECT_FALSE(CountHostList("gpu[1-").ok());
}

TEST(SlurmConfigTest, SharedSiteConfig) {
  SM_SKIP_WITHOUT_SHARED(path, "traces/slurm_local_sacct/slurm.conf");
  auto r = ReadSlurmConf(path);
  ASSERT_OK(r);
  EXPECT_TRUE(r->config.backfill);
  EXPECT_EQ(r->nodes.nodes, 2);
  EXPECT_EQ(r->nodes.gpus_per_node, 8);
}

}  // namespace
}  // namespace schedmate::policy
