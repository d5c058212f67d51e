// The simulator's `slurm` policy against a REAL Slurm (scripts/slurm-local.sh start; SLURM_CONF
// picks the instance): ~20 sleep jobs are submitted, Slurm's record of them (jobcomp) becomes a
// `sacct -P` export, and `schedmate simulate --format sacct --slurm-conf <the cluster's own>
// --policy slurm --jobs-out` replays it. The simulated start order must match the real one.
// SKIPS when no Slurm answers or its queue is not empty (the replay needs the cluster to itself).
// The full benchmark (220 jobs, start-time estimates) is bench/slurm_fidelity/.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/file_util.h"
#include "core/strings.h"
#include "policy/slurm_config.h"
#include "service/local_slurm.h"
#include "testing/test_util.h"

namespace schedmate::sim {
namespace {

using schedmate::testing::RunShell;

std::string Sh(const std::string& cmd) { return RunShell(cmd).out; }

struct RealJob {
  std::string id;
  int gpus = 0;
  int limit_min = 0;
  int64_t submit = 0, eligible = 0, start = 0, end = 0;
  std::string state;
};

int64_t ParseLocal(const std::string& text) {
  std::tm tm{};
  if (strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return -1;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(mktime(&tm));
}

std::string FormatLocal(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string Hms(int64_t s) {
  return fmt::format("{:02d}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60);
}

// Slurm's record of `ids` (jobcomp/filetxt: one key=value line per finished job).
std::map<std::string, RealJob> ReadJobcomp(const std::string& path,
                                           const std::map<std::string, RealJob>& ids) {
  std::map<std::string, RealJob> out;
  auto text = ReadFileToString(path);
  if (!text.ok()) return out;
  for (auto line : Split(*text, '\n')) {
    std::map<std::string, std::string> kv;
    for (auto field : Split(line, ' ')) {
      const auto eq = field.find('=');
      if (eq != std::string_view::npos) {
        kv[std::string(field.substr(0, eq))] = std::string(field.substr(eq + 1));
      }
    }
    auto it = ids.find(kv["JobId"]);
    if (it == ids.end() || kv["JobState"] == "PENDING") continue;
    RealJob j = it->second;
    j.state = kv["JobState"];
    j.submit = ParseLocal(kv["SubmitTime"]);
    j.eligible = kv.count("EligibleTime") ? ParseLocal(kv["EligibleTime"]) : j.submit;
    if (j.eligible < 0) j.eligible = j.submit;
    j.start = ParseLocal(kv["StartTime"]);
    j.end = ParseLocal(kv["EndTime"]);
    out[j.id] = j;
  }
  return out;
}

TEST(SlurmFidelity, SimulatedStartOrderMatchesRealSlurm) {
  std::string skip;
  const std::string conf = service::testing::LocalSlurmConf(skip);
  if (conf.empty()) GTEST_SKIP() << skip;
  if (Trim(Sh("squeue -h | wc -l")) != "0") GTEST_SKIP() << "the Slurm queue is not empty";
  auto parsed = policy::ReadSlurmConf(conf);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const int nodes = parsed->nodes.nodes;
  const int gpn = parsed->nodes.gpus_per_node;
  ASSERT_GT(nodes, 0);
  ASSERT_GE(gpn, 4) << "the replay needs nodes of at least 4 GPUs";
  const std::string jobcomp =
      std::string(Trim(Sh("scontrol show config | awk -F'= ' '/^JobCompLoc/{print $2}'")));
  schedmate::testing::TempDir dir;

  // 20 jobs, a queue from the first seconds: whole nodes, half nodes, quarters and single GPUs,
  // 3-12 s runs, limits of 1-2 minutes (so backfill plans by limits, not by the runs).
  const int sizes[] = {gpn, gpn / 2, 1, gpn / 4, gpn, 2, gpn / 2, 1, gpn, gpn / 4};
  const int runs[] = {8, 5, 12, 3, 6, 10, 4, 7, 9, 5, 11};
  std::map<std::string, RealJob> ids;
  for (int i = 0; i < 20; ++i) {
    RealJob j;
    j.gpus = std::max(1, sizes[i % 10]);
    j.limit_min = 1 + i % 2;
    const int run_s = runs[i % 11];
    auto r =
        RunShell(fmt::format("cd {} && sbatch --parsable -J fidtest-{} -o /dev/null -t {} "
                             "--gres=gpu:{} --wrap 'sleep {}'",
                             dir.path(), i, j.limit_min, j.gpus, run_s));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    j.id = std::string(Trim(r.out.substr(0, r.out.find(';'))));
    ids[j.id] = j;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  const auto t0 = std::chrono::steady_clock::now();
  while (Trim(Sh("squeue -h -o '%j' | grep -c '^fidtest-' || true")) != "0") {
    ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(150))
        << "the replay did not finish";
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  auto real = ReadJobcomp(jobcomp, ids);
  ASSERT_EQ(real.size(), ids.size()) << "jobcomp " << jobcomp << " lacks some of the jobs";

  // Slurm's record as a sacct export, in submission (job id) order; the run time is Slurm's.
  std::vector<RealJob> order;
  for (const auto& [id, j] : real) order.push_back(j);
  std::sort(order.begin(), order.end(),
            [](const RealJob& a, const RealJob& b) { return std::stoll(a.id) < std::stoll(b.id); });
  std::string sacct =
      "JobID|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|Timelimit|ReqTRES|"
      "NNodes|State\n";
  for (const auto& j : order) {
    EXPECT_EQ(j.state, "COMPLETED") << j.id;
    sacct += fmt::format("{}|u|u|gpu|normal|{}|{}|{}|{}|{}|{}|cpu=1,gres/gpu={},node=1|1|{}\n",
                         j.id, FormatLocal(j.submit), FormatLocal(j.eligible), FormatLocal(j.start),
                         FormatLocal(j.end), Hms(j.end - j.start), Hms(j.limit_min * 60), j.gpus,
                         j.state);
  }
  const std::string trace = dir.path() + "/replay.sacct";
  const std::string jobs_out = dir.path() + "/sim_jobs.csv";
  ASSERT_TRUE(WriteStringToFile(trace, sacct).ok());
  auto sim = RunShell(fmt::format(
      "{} simulate --trace {} --format sacct --nodes {} --gpus-per-node {} --slurm-conf {} "
      "--policy slurm --json --jobs-out {}",
      schedmate::testing::SchedmateBinary(), trace, nodes, gpn, conf, jobs_out));
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  auto csv = ReadFileToString(jobs_out);
  ASSERT_TRUE(csv.ok());
  std::map<std::string, double> sim_start, sim_submit;  // the simulator's clock
  for (auto line : Split(*csv, '\n')) {
    auto f = Split(line, ',');
    if (f.size() < 7 || f[0] == "policy" || f[4].empty()) continue;
    sim_start[std::string(f[2])] = std::stod(std::string(f[4]));
    sim_submit[std::string(f[2])] = std::stod(std::string(f[3]));
  }
  ASSERT_EQ(sim_start.size(), real.size());

  // Every pair of jobs Slurm started in different seconds: the simulator starts them in the same
  // order, allowing pairs Slurm started within one backfill interval of each other (which of
  // two passes a job lands in depends on the backfill thread's phase).
  const double bf = static_cast<double>(parsed->config.bf_interval.seconds());
  int pairs = 0, agree = 0;
  for (size_t a = 0; a < order.size(); ++a) {
    for (size_t b = a + 1; b < order.size(); ++b) {
      const int64_t dr = order[a].start - order[b].start;
      if (std::abs(static_cast<double>(dr)) <= bf) continue;
      ++pairs;
      const double ds = sim_start[order[a].id] - sim_start[order[b].id];
      if ((dr < 0) == (ds < 0)) ++agree;
    }
  }
  ASSERT_GT(pairs, 20) << "the replay built no queue";
  EXPECT_EQ(agree, pairs) << agree << " of " << pairs << " pairs in Slurm's order";
  // And the waits (start - eligible): the median difference is within one backfill interval.
  std::vector<double> diffs;
  for (const auto& j : order) {
    const double sim_wait = sim_start[j.id] - sim_submit[j.id];
    diffs.push_back(std::abs(sim_wait - static_cast<double>(j.start - j.eligible)));
  }
  std::sort(diffs.begin(), diffs.end());
  EXPECT_LE(diffs[diffs.size() / 2], bf);
}

}  // namespace
}  // namespace schedmate::sim
