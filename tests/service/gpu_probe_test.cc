#include "service/gpu_probe.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/strings.h"
#include "llm/http_transport.h"
#include "service/log_ranks.h"
#include "service/service_config.h"
#include "slurm/fake_command_runner.h"
#include "slurm/slurm_backend.h"
#include "slurm/slurm_types.h"

namespace schedmate::service {
namespace {

const SimTime kNow = SimTime::FromSeconds(1'800'000'000);

TEST(GpuProbe, NvidiaSmiCsv) {
  auto s = ParseNvidiaSmiCsv("1, 0, 0\n0, 97, 30100\n2, [N/A], 512\n", "gpu1", "smi");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].index, 0);  // sorted by index
  EXPECT_EQ((*s)[0].node, "gpu1");
  EXPECT_DOUBLE_EQ(*(*s)[0].utilization_pct, 97);
  EXPECT_DOUBLE_EQ((*s)[0].memory_used_mib, 30100);
  EXPECT_FALSE((*s)[2].utilization_pct.has_value());
  for (const char* bad : {"0, 50\n", "x, 1, 2\n", "0, 150, 2\n", "0, 5, -1\n", "0, nan, 1\n"}) {
    auto r = ParseNvidiaSmiCsv(std::string("0, 1, 1\n") + bad, "gpu1", "smi@gpu1");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("smi@gpu1:2"), std::string::npos) << r.status().message();
  }
}

TEST(GpuProbe, DcgmPrometheusText) {
  const char* text =
      "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
      "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\",device=\"nvidia1\",modelName=\"A100\","
      "Hostname=\"gpu1\"} 3\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",device=\"nvidia0\",Hostname=\"gpu1\","
      "container=\"\",namespace=\"a\\\"b\"} 88 1700000000000\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",Hostname=\"gpu1\"} 40000\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",Hostname=\"gpu1\"} 1410\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"gpu2\"} 50\n";
  auto s = ParseDcgmMetrics(text, "dcgm");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].node, "gpu1");
  EXPECT_EQ((*s)[0].index, 0);
  EXPECT_DOUBLE_EQ(*(*s)[0].utilization_pct, 88);
  EXPECT_DOUBLE_EQ((*s)[0].memory_used_mib, 40000);
  EXPECT_DOUBLE_EQ(*(*s)[1].utilization_pct, 3);
  EXPECT_EQ((*s)[2].node, "gpu2");
  auto bad = ParseDcgmMetrics("\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 5\n", "url");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("url:2"), std::string::npos);
  EXPECT_FALSE(ParseDcgmMetrics("DCGM_FI_DEV_GPU_UTIL{gpu=\"0,Hostname=\"x\"} 5", "u").ok());
  EXPECT_FALSE(ParseDcgmMetrics("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"x\"} many", "u").ok());
  EXPECT_FALSE(ParseDcgmMetrics("DCGM_FI_DEV_GPU_UTIL 5", "u").ok());
}

TEST(GpuProbe, JobGpusByIndexUnlessTheNodeShowsOnlyTheJobs) {
  std::vector<GpuSample> node;
  for (int i = 0; i < 4; ++i) node.push_back({.node = "n", .index = i});
  auto two = JobGpus(node, {3, 1});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].index, 1);
  EXPECT_EQ(two[1].index, 3);
  // A cgroup-constrained node shows the job's 2 GPUs as 0 and 1 whatever Slurm's indices.
  std::vector<GpuSample> constrained = {{.node = "n", .index = 0}, {.node = "n", .index = 1}};
  EXPECT_EQ(JobGpus(constrained, {4, 5}).size(), 2u);
}

slurm::SlurmJob Job(const std::string& id, int gpus) {
  slurm::SlurmJob j;
  j.id = id;
  j.state = "RUNNING";
  j.gpus = gpus;
  j.node_list = "gpu1";
  j.node_names = {"gpu1"};
  return j;
}

TEST(GpuProbe, SlurmProbeAsksTheJobsNodesAndSstat) {
  slurm::FakeCommandRunner runner;
  slurm::SlurmBackend backend(runner, {});
  runner.SetOutput({"scontrol", "show", "job", "-d", "7"},
                   "     Nodes=gpu1 CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:2-3)\n");
  runner.SetOutput({"srun", "--jobid=7"}, "0, 99, 100\n1, 99, 100\n2, 0, 900\n3, 80, 900\n");
  runner.SetOutput({"sstat"}, "7.batch|cpu=00:00:10,mem=1G\n7.0|cpu=00:00:20,mem=1G\n");
  SlurmUsageProbe probe(backend, nullptr, {});
  auto u = probe.Probe(Job("7", 2), kNow);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->gpu_source, "nvidia-smi");
  EXPECT_EQ(u->gpu_error, "");
  ASSERT_EQ(u->gpus.size(), 2u);
  EXPECT_EQ(u->gpus[0].index, 2);
  EXPECT_DOUBLE_EQ(*u->gpus[0].utilization_pct, 0);
  EXPECT_DOUBLE_EQ(*u->cpu_seconds, 30);
  EXPECT_EQ(*u->memory_bytes, int64_t{2} << 30);
  auto calls = runner.CallsStartingWith("srun");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_NE(calls[0].find("-w gpu1 --quiet nvidia-smi --query-gpu=index,utilization.gpu,"
                          "memory.used --format=csv,noheader,nounits"),
            std::string::npos);
  // nvidia-smi failing on the node is an error field, not a failed probe.
  runner.SetOutput({"srun", "--jobid=7"}, "No devices were found\n", 6);
  auto failed = probe.Probe(Job("7", 2), kNow);
  ASSERT_TRUE(failed.ok());
  EXPECT_TRUE(failed->gpus.empty());
  EXPECT_NE(failed->gpu_error.find("exited 6"), std::string::npos);
  // A run's GPU indices are asked once; a new run (another start) asks again.
  EXPECT_EQ(runner.CallsStartingWith("scontrol show job -d").size(), 1u);
  slurm::SlurmJob restarted = Job("7", 2);
  restarted.start = kNow;
  ASSERT_TRUE(probe.Probe(restarted, kNow).ok());
  EXPECT_EQ(runner.CallsStartingWith("scontrol show job -d").size(), 2u);
}

class ScriptedHttp : public llm::HttpTransport {
 public:
  Result<llm::HttpResponse> Send(const llm::HttpRequest& r) override {
    urls.push_back(r.url);
    return llm::HttpResponse{.status = 200, .body = body};
  }
  Result<llm::HttpResponse> SendStreaming(const llm::HttpRequest& r,
                                          const llm::BodyChunkCallback&) override {
    return Send(r);
  }
  std::string body;
  std::vector<std::string> urls;
};

TEST(GpuProbe, DcgmProbeFetchesEachNodesExporter) {
  slurm::FakeCommandRunner runner;
  slurm::SlurmBackend backend(runner, {});
  runner.SetOutput({"scontrol", "show", "job", "-d", "8"},
                   "     Nodes=gpu1 CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:1)\n");
  ScriptedHttp http;
  http.body =
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"gpu1.cluster\"} 90\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"gpu1.cluster\"} 2\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"1\",Hostname=\"gpu1.cluster\"} 700\n";
  UsageProbeOptions o;
  o.gpu_source = GpuSource::kDcgm;
  o.sstat = false;
  o.dcgm_url = "http://{node}:9400/metrics";
  SlurmUsageProbe probe(backend, &http, o);
  auto u = probe.Probe(Job("8", 1), kNow);
  ASSERT_TRUE(u.ok());
  ASSERT_EQ(http.urls, std::vector<std::string>{"http://gpu1:9400/metrics"});
  ASSERT_EQ(u->gpus.size(), 1u);
  EXPECT_EQ(u->gpus[0].node, "gpu1");
  EXPECT_EQ(u->gpus[0].index, 1);
  EXPECT_DOUBLE_EQ(*u->gpus[0].utilization_pct, 2);
  EXPECT_DOUBLE_EQ(u->gpus[0].memory_used_mib, 700);
  EXPECT_TRUE(runner.CallsStartingWith("srun").empty());
  EXPECT_TRUE(runner.CallsStartingWith("sstat").empty());
}

// Sleeps longer for earlier jobs, so they finish last; counts probes in flight.
class SlowProbe : public UsageProbe {
 public:
  Result<JobUsage> Probe(const slurm::SlurmJob& job, SimTime now) override {
    const int in_flight = ++running_;
    int seen = max_running_.load();
    while (in_flight > seen && !max_running_.compare_exchange_weak(seen, in_flight)) {
    }
    const int n = static_cast<int>(ParseInt(job.id).value_or(0));
    std::this_thread::sleep_for(std::chrono::milliseconds(40 * (8 - n)));
    --running_;
    if (n == 3) return Status::Unavailable("srun failed for " + job.id);
    return JobUsage{.at = now, .gpu_source = "nvidia-smi", .gpu_error = job.id};
  }
  std::atomic<int> running_{0};
  std::atomic<int> max_running_{0};
};

TEST(GpuProbe, ProbeAllRunsABoundedPoolAndKeepsTheJobsOrder) {
  std::vector<slurm::SlurmJob> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back(Job(std::to_string(i), 1));
  std::vector<const slurm::SlurmJob*> ptrs;
  for (const auto& j : jobs) ptrs.push_back(&j);
  for (int parallel : {1, 3, 64}) {
    SCOPED_TRACE(parallel);
    SlowProbe probe;
    const auto t0 = std::chrono::steady_clock::now();
    auto out = ProbeAll(probe, ptrs, kNow, parallel);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(out.size(), jobs.size());
    for (size_t i = 0; i < out.size(); ++i) {
      if (i == 3) {
        ASSERT_FALSE(out[i].ok());
        EXPECT_EQ(out[i].status().code(), StatusCode::kUnavailable);
        continue;
      }
      ASSERT_TRUE(out[i].ok());
      EXPECT_EQ(out[i]->gpu_error, std::to_string(i));  // the job's own answer, in its place
    }
    EXPECT_LE(probe.max_running_.load(), std::min(parallel, 6));
    if (parallel == 1) {
      EXPECT_EQ(probe.max_running_.load(), 1);
      EXPECT_GE(took, 0.04 * (8 + 7 + 6 + 5 + 4 + 3));  // one after the other
    } else {
      EXPECT_GT(probe.max_running_.load(), 1);
    }
    if (parallel == 64) {
      EXPECT_LT(took, 0.04 * (8 + 7 + 6));  // about the slowest one
    }
  }
  SlowProbe idle;
  EXPECT_TRUE(ProbeAll(idle, {}, kNow, 4).empty());
}

TEST(LogRanks, DeclaredWorldSizesAndRankTags) {
  struct Case {
    const char* name;
    std::vector<const char*> lines;
    std::optional<int> ranks;
  };
  const Case cases[] = {
      {"torch", {"Initialized process group; world_size=1 backend=nccl"}, 1},
      {"env dump", {"WORLD_SIZE: 8", "loss 0.5"}, 8},
      {"python dict", {"{'rank': 0, 'world_size': 4}"}, 4},
      {"accelerate", {"Distributed environment: MULTI_GPU  Backend: nccl", "Num processes: 2"}, 2},
      {"lightning", {"Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4"}, 4},
      {"rank of", {"Rank 0 of 8 ready"}, 8},
      {"relaunch", {"world_size=8", "world_size=2"}, 2},
      {"tags", {"[rank0]: step 1", "[rank1]: step 1", "[rank2]:step 1"}, 3},
      {"one tag proves nothing", {"[rank0]: step 1"}, std::nullopt},
      {"nothing", {"epoch 1 step 10 loss 0.3", "world of warcraft"}, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    LogRankScanner s;
    for (const char* l : c.lines) s.AddLine(l);
    EXPECT_EQ(s.Ranks(), c.ranks);
  }
}

TEST(UsageConfig, KeysParseAndBadValuesNameTheLine) {
  auto c = ParseServiceConfig(
      "usage:\n  gpu_source: dcgm\n  dcgm_url: http://{node}:9400/metrics\n  interval_s: 5\n"
      "  max_jobs_per_pass: 3\n  sstat: false\n  parallel: 2\n"
      "anomalies:\n  idle_gpu_util_pct: 10\n  idle_gpu_min_s: 30\n  min_cpus: 2\n"
      "  over_requested_min_s: 45\n  stalled_min_s: 1\n",
      "s.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->usage.gpu_source, GpuSource::kDcgm);
  EXPECT_EQ(c->usage.interval, Duration::Seconds(5));
  EXPECT_EQ(c->usage.max_jobs_per_pass, 3);
  EXPECT_EQ(c->usage.parallel, 2);
  EXPECT_FALSE(c->usage.sstat);
  EXPECT_DOUBLE_EQ(c->anomalies.idle_gpu_util_pct, 10);
  EXPECT_EQ(c->anomalies.min_idle_gpu, Duration::Seconds(30));
  EXPECT_EQ(c->anomalies.min_over_requested, Duration::Seconds(45));
  EXPECT_EQ(c->anomalies.min_stalled, Duration::Seconds(1));
  EXPECT_EQ(c->anomalies.min_cpus, 2);
  auto bad = ParseServiceConfig("anomalies:\n  idle_gpu_util_pct: 101\n", "s.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("s.yaml:2: anomalies.idle_gpu_util_pct"), std::string::npos)
      << bad.status().message();
  auto src = ParseServiceConfig("usage:\n  gpu_source: ipmi\n", "s.yaml");
  ASSERT_FALSE(src.ok());
  EXPECT_NE(src.status().message().find("s.yaml:2: usage.gpu_source"), std::string::npos);
  EXPECT_FALSE(ParseServiceConfig("usage:\n  dcgm_url: file:///etc/passwd\n", "s").ok());
  EXPECT_FALSE(ParseServiceConfig("anomalies:\n  idle_min: 3\n", "s").ok());
  auto pool = ParseServiceConfig("usage:\n  parallel: 0\n", "s.yaml");
  ASSERT_FALSE(pool.ok());
  EXPECT_NE(pool.status().message().find("s.yaml:2: usage.parallel"), std::string::npos)
      << pool.status().message();
}

}  // namespace
}  // namespace schedmate::service
