// One `schedmate serve` watching two REAL Slurm clusters side by side (slurm.clusters): cluster
// "a" is the local Slurm of SLURM_CONF (scripts/slurm-local.sh), cluster "b" the second instance
// whose slurm.conf SCHEDMATE_SLURM_CONF_B names (scripts/test.sh starts it). SKIPS when either
// does not answer. Checks: each cluster's jobs show with their cluster, ?cluster= filters, and an
// infrastructure failure on b is acted on on b only.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/file_util.h"
#include "core/strings.h"
#include "local_slurm.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using nlohmann::json;
using schedmate::testing::RunShell;
using schedmate::testing::ShellQuote;

bool WaitFor(double seconds, const std::function<bool()>& probe) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (probe()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return probe();
}

// A shell command (every part of a pipeline) with one cluster's SLURM_CONF.
std::string On(const std::string& conf, const std::string& cmd) {
  return RunShell("export SLURM_CONF=" + ShellQuote(conf) + "; " + cmd).out;
}

std::string JobComp(const std::string& conf) {
  return std::string(Trim(On(conf, "scontrol show config | awk -F'= ' '/^JobCompLoc/{print $2}'")));
}

class SlurmClusters : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip;
    conf_a_ = testing::LocalSlurmConf(skip);
    if (conf_a_.empty()) GTEST_SKIP() << skip;
    const char* b = std::getenv("SCHEDMATE_SLURM_CONF_B");
    if (b == nullptr || !std::filesystem::exists(b)) {
      GTEST_SKIP() << "no second Slurm (SCHEDMATE_SLURM_CONF_B; scripts/test.sh starts one)";
    }
    conf_b_ = b;
    if (RunShell("SLURM_CONF=" + ShellQuote(conf_b_) + " scontrol ping | grep -q UP").exit_code !=
        0) {
      GTEST_SKIP() << "the second slurmctld (" << conf_b_ << ") is not answering";
    }
    ASSERT_NE(conf_a_, conf_b_);
    ASSERT_OK(WriteStringToFile(dir_.File("token"), "mc-token\n"));
    ASSERT_EQ(chmod(dir_.File("token").c_str(), 0600), 0);
    ASSERT_OK(
        WriteStringToFile(dir_.File("schedmate.yaml"),
                          fmt::format("slurm:\n  clusters:\n"
                                      "    - {{name: a, slurm_conf: {}, jobcomp_path: {}}}\n"
                                      "    - {{name: b, slurm_conf: {}, jobcomp_path: {}}}\n"
                                      "actions:\n  retries_per_job: 0\n  max_drained_nodes: 1\n"
                                      "  hold_after_budget: false\n",
                                      conf_a_, JobComp(conf_a_), conf_b_, JobComp(conf_b_))));
    const std::string port_file = dir_.File("port");
    pid_ = static_cast<pid_t>(
        ParseInt(
            Trim(RunShell(fmt::format(
                              "{} serve --slurm --config {} --data-dir {} --port 0 --port-file {}"
                              " --poll 0.25 --token-file {} >>{} 2>&1 & echo $!",
                              ShellQuote(schedmate::testing::SchedmateBinary()),
                              ShellQuote(dir_.File("schedmate.yaml")),
                              ShellQuote(dir_.File("data")), ShellQuote(port_file),
                              ShellQuote(dir_.File("token")), ShellQuote(dir_.File("serve.log"))))
                     .out))
            .value_or(-1));
    ASSERT_GT(pid_, 0);
    ASSERT_TRUE(WaitFor(10, [&] { return std::filesystem::exists(port_file); })) << Log();
    port_ = static_cast<int>(ParseInt(Trim(ReadFileToString(port_file).value_or(""))).value_or(0));
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      WaitFor(5, [&] {
        auto stat = ReadFileToString(fmt::format("/proc/{}/stat", pid_));
        return !stat.ok() || stat->find(") Z ") != std::string::npos;
      });
      kill(pid_, SIGKILL);
    }
    // Leave both clusters as found: our jobs gone, nodes schedmate drained resumed.
    for (const std::string& conf : {conf_a_, conf_b_}) {
      if (conf.empty()) continue;
      On(conf, "squeue -h -o '%i %j' | awk '$2 ~ /^mctest-/ {print $1}' | xargs -r scancel");
      On(conf,
         "sinfo -h -N -o '%N|%E' | awk -F'|' '$2 ~ /^schedmate/ {print $1}' | "
         "xargs -r -I{} scontrol update NodeName={} State=RESUME");
    }
  }
  std::string Log() { return ReadFileToString(dir_.File("serve.log")).value_or(""); }
  json Get(const std::string& path, int* status = nullptr) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(5);
    auto res = client.Get(path.c_str());
    if (status != nullptr) *status = res ? res->status : 0;
    if (!res) return json();
    return json::parse(res->body, nullptr, false);
  }
  std::string Submit(const std::string& conf, const std::string& name, const std::string& body) {
    std::string script = dir_.File(name + ".sh");
    EXPECT_OK(WriteStringToFile(script, "#!/bin/bash\n#SBATCH -J mctest-" + name + "\n#SBATCH -o " +
                                            dir_.File(name + "-%j.out") + "\n" + body));
    auto r = RunShell(fmt::format("cd {} && SLURM_CONF={} sbatch --parsable --gres=gpu:1 {}",
                                  ShellQuote(dir_.path()), ShellQuote(conf), ShellQuote(script)));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::string(Trim(r.out));
  }
  // The cluster of every job `id` named mctest-<name> in /v1/jobs[?query] (ids repeat across
  // clusters, and finished jobs of earlier runs stay listed for MinJobAge). The list pages one
  // cluster: ?cluster=, else the first.
  std::vector<std::string> ClustersOf(const std::string& id, const std::string& name,
                                      const std::string& query = "") {
    std::vector<std::string> out;
    json jobs = Get("/v1/jobs" + query);
    if (!jobs.is_object()) return out;
    for (const auto& j : jobs["jobs"])
      if (j["id"] == id && j["name"] == "mctest-" + name) out.push_back(j["cluster"]);
    return out;
  }
  std::vector<json> Items(const std::string& path, const std::string& key, const std::string& id) {
    std::vector<json> out;
    json all = Get(path);
    if (!all.is_object()) return out;
    for (const auto& a : all[key])
      if (a["job_id"] == id) out.push_back(a);
    return out;
  }

  schedmate::testing::TempDir dir_;
  std::string conf_a_, conf_b_;
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST_F(SlurmClusters, OneServeWatchesTwoClustersAndActsOnTheFailingOneOnly) {
  json clusters = Get("/v1/clusters");
  ASSERT_TRUE(clusters.is_object()) << Log();
  ASSERT_EQ(clusters["clusters"].size(), 2u);
  EXPECT_EQ(clusters["clusters"][0]["name"], "a");
  EXPECT_EQ(clusters["clusters"][1]["name"], "b");

  std::string a_job = Submit(conf_a_, "sleep-a", "sleep 60\n");
  std::string b_job = Submit(conf_b_, "sleep-b", "sleep 60\n");
  ASSERT_TRUE(WaitFor(
      15,
      [&] {
        return ClustersOf(a_job, "sleep-a", "?cluster=a") == std::vector<std::string>{"a"} &&
               ClustersOf(b_job, "sleep-b", "?cluster=b") == std::vector<std::string>{"b"};
      }))
      << Get("/v1/jobs").dump() << Log();
  // ?cluster= filters, and every job of a filtered list is of that cluster.
  EXPECT_EQ(ClustersOf(a_job, "sleep-a", "?cluster=a"), std::vector<std::string>{"a"});
  EXPECT_TRUE(ClustersOf(a_job, "sleep-a", "?cluster=b").empty());
  EXPECT_TRUE(ClustersOf(b_job, "sleep-b", "?cluster=a").empty());
  EXPECT_TRUE(ClustersOf(b_job, "sleep-b").empty());  // the first cluster's page
  const json b_list = Get("/v1/jobs?cluster=b");
  for (const auto& j : b_list["jobs"]) EXPECT_EQ(j["cluster"], "b");
  // b's job id may also be listed on a (a's own job of that id, or one of an earlier run still
  // within MinJobAge): then the job route needs the cluster (409 naming both), else it is b's.
  bool on_a = false;
  const json a_list = Get("/v1/jobs?cluster=a");
  for (const auto& j : a_list["jobs"]) on_a = on_a || j["id"] == b_job;
  int status = 0;
  json plain = Get("/v1/jobs/" + b_job, &status);
  if (on_a) {
    EXPECT_EQ(status, 409);
    EXPECT_EQ(plain["code"], "ambiguous");
    EXPECT_EQ(plain["clusters"], json::array({"a", "b"}));
  } else {
    EXPECT_EQ(plain["cluster"], "b") << status << " " << plain.dump();
  }
  EXPECT_EQ(Get("/v1/jobs/" + b_job + "?cluster=b")["cluster"], "b");
  json health = Get("/healthz");
  EXPECT_EQ(health["slurm_ok"], true) << health.dump();

  // An infrastructure failure on b: b's node drained, the failure recorded for b; a untouched.
  std::string bad = Submit(conf_b_, "xid-b",
                           "echo \"NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off "
                           "the bus on $SLURMD_NODENAME\"\nexit 1\n");
  std::vector<json> failures;
  ASSERT_TRUE(WaitFor(20,
                      [&] {
                        failures = Items("/v1/failures?cluster=b", "failures", bad);
                        return !failures.empty();
                      }))
      << Get("/v1/failures").dump() << Log();
  EXPECT_EQ(failures[0]["cluster"], "b");
  EXPECT_EQ(failures[0]["class"], "infra");
  std::vector<json> drains;
  ASSERT_TRUE(WaitFor(10, [&] {
    drains.clear();
    for (const auto& a : Items("/v1/actions?cluster=b", "actions", bad))
      if (a["kind"] == "drain" && a["outcome"] == "done") drains.push_back(a);
    return !drains.empty();
  })) << Get("/v1/actions").dump();
  const std::string node = drains[0]["node"];
  EXPECT_EQ(drains[0]["cluster"], "b");
  EXPECT_NE(On(conf_b_, "sinfo -h -N -n " + ShellQuote(node) + " -o '%T %E'").find("schedmate"),
            std::string::npos);
  // Nothing on a: no failure or action for that run, no node a drained for schedmate, and
  // a's own job still runs.
  for (const auto& f : Items("/v1/failures?cluster=a", "failures", bad))
    EXPECT_NE(f["run_key"], failures[0]["run_key"]);
  EXPECT_TRUE(Trim(On(conf_a_, "sinfo -h -N -o '%E' | grep '^schedmate' || true")).empty());
  EXPECT_EQ(Trim(On(conf_a_, "squeue -h -j " + a_job + " -o '%T'")), "RUNNING");
  json a_actions = Get("/v1/actions?cluster=a");
  for (const auto& a : a_actions["actions"]) EXPECT_NE(a["node"], node) << a.dump();

  auto metrics = httplib::Client("127.0.0.1", port_).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("schedmate_slurm_ok{cluster=\"a\"} 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("schedmate_slurm_ok{cluster=\"b\"} 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("schedmate_failures_total{cluster=\"b\",class=\"infra\"} 1"),
            std::string::npos)
      << metrics->body;
}

}  // namespace
}  // namespace schedmate::service
