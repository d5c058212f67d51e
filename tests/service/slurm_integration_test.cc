// Integration tests against a REAL Slurm (scripts/slurm-local.sh start) and the real
// `schedmate serve --slurm` binary. They SKIP when no Slurm answers. One process runs every case
// in order against one service instance (ctest runs this binary as a single test, label slurm).
//
// Prints the measured reaction times as "[measure] ..." lines.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "core/file_util.h"
#include "core/strings.h"
#include "local_slurm.h"
#include "slurm/slurm_parsers.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using nlohmann::json;
using schedmate::testing::RunShell;
using schedmate::testing::ShellQuote;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Polls `probe` every 50 ms until it returns true or `seconds` pass.
bool WaitFor(double seconds, const std::function<bool()>& probe) {
  auto t0 = Clock::now();
  while (Since(t0) < seconds) {
    if (probe()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return probe();
}

std::string Sh(const std::string& cmd) { return RunShell(cmd).out; }

// "2026-11-22T03:05:52" (Slurm prints local time) as a wall-clock time point.
std::optional<std::chrono::system_clock::time_point> SlurmTime(const std::string& text) {
  std::tm tm{};
  if (strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return std::nullopt;
  tm.tm_isdst = -1;
  time_t t = mktime(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}

class SlurmIntegration : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    const std::string path = testing::LocalSlurmConf(skip_reason_);
    if (path.empty()) return;
    conf_dir_ = std::filesystem::path(path).parent_path().string();
    jobcomp_ = std::string(Trim(Sh("scontrol show config | awk -F'= ' '/^JobCompLoc/{print $2}'")));
    dir_ = new schedmate::testing::TempDir();
    ASSERT_OK(WriteStringToFile(dir_->File("token"), "itest-token\n"));
    ASSERT_EQ(chmod(dir_->File("token").c_str(), 0600), 0);  // serve refuses a readable token
    // Short backoff so a requeued job runs again within the test; one retry, then a hold.
    ASSERT_OK(WriteStringToFile(dir_->File("schedmate.yaml"),
                                "actions:\n  retries_per_job: 1\n  max_drained_nodes: 1\n"
                                "  backoff_base_s: 3\n  backoff_cap_s: 10\n"));
    // Point the Lua hook at our service for the duration of the suite.
    submit_conf_ = conf_dir_ + "/schedmate_submit.conf";
    saved_submit_conf_ = ReadFileToString(submit_conf_).value_or("");
    StartService();
  }

  static void TearDownTestSuite() {
    if (!skip_reason_.empty()) return;
    StopService(SIGTERM);
    if (!saved_submit_conf_.empty()) (void)WriteStringToFile(submit_conf_, saved_submit_conf_);
    // Leave the cluster as we found it: our jobs gone, nodes we drained resumed.
    RunShell("squeue -h -o '%i %j' | awk '$2 ~ /^itest-/ {print $1}' | xargs -r scancel");
    RunShell(
        "sinfo -h -N -o '%N|%E' | awk -F'|' '$2 ~ /^schedmate/ {print $1}' | "
        "xargs -r -I{} scontrol update NodeName={} State=RESUME");
    delete dir_;
    dir_ = nullptr;
  }

  // `extra` flags for serve (e.g. --dry-run); `data` names the data directory under the suite's.
  static void StartService(const std::string& extra = "", const std::string& data = "data") {
    StopService(SIGTERM);  // never two instances acting on one cluster
    std::string port_file = dir_->File("port");
    std::filesystem::remove(port_file);
    std::string cmd = fmt::format(
        "{} serve --slurm --config {} --data-dir {} --jobcomp {} --port 0 --port-file {} "
        "--poll 0.25 --submit-policy set --token-file {} {} >>{} 2>&1 & echo $!",
        ShellQuote(schedmate::testing::SchedmateBinary()), ShellQuote(dir_->File("schedmate.yaml")),
        ShellQuote(dir_->File(data)), ShellQuote(jobcomp_), ShellQuote(port_file),
        ShellQuote(dir_->File("token")), extra, ShellQuote(dir_->File("serve.log")));
    pid_ = static_cast<pid_t>(ParseInt(Trim(Sh(cmd))).value_or(-1));
    ASSERT_GT(pid_, 0);
    ASSERT_TRUE(WaitFor(10, [&] { return std::filesystem::exists(port_file); }))
        << ReadFileToString(dir_->File("serve.log")).value_or("");
    port_ = static_cast<int>(ParseInt(Trim(ReadFileToString(port_file).value_or(""))).value_or(0));
    ASSERT_GT(port_, 0);
    ASSERT_OK(WriteStringToFile(
        submit_conf_, fmt::format("url=http://127.0.0.1:{}/v1/estimate\ntimeout_s=1\ncurl={}\n",
                                  port_, Trim(Sh("command -v curl")))));
  }

  static void StopService(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    // Not our child (the shell started it), so it may linger as a zombie: that counts as gone.
    auto gone = [](pid_t pid) {
      auto stat = ReadFileToString(fmt::format("/proc/{}/stat", pid));
      return !stat.ok() || stat->find(") Z ") != std::string::npos;
    };
    for (int i = 0; i < 100 && !gone(pid_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Never two instances acting on one cluster: one that ignores SIGTERM for 5 s is killed.
    if (!gone(pid_)) {
      std::cerr << "[itest] serve " << pid_ << " still up 5 s after signal " << sig
                << "; sending SIGKILL\n";
      kill(pid_, SIGKILL);
      for (int i = 0; i < 100 && !gone(pid_); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    EXPECT_TRUE(gone(pid_)) << "serve " << pid_ << " survived SIGKILL";
    pid_ = -1;
  }

 protected:
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  }

  static json Get(const std::string& path) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(5);
    auto res = client.Get(path.c_str());
    if (!res || res->status != 200) return json();
    return json::parse(res->body, nullptr, false);
  }

  // Writes `body` as a batch script named itest-<name> and submits it; returns {id, stderr}.
  static std::pair<std::string, std::string> Submit(const std::string& name,
                                                    const std::string& body,
                                                    const std::string& extra = "") {
    std::string script = dir_->File(name + ".sh");
    EXPECT_OK(WriteStringToFile(script, "#!/bin/bash\n#SBATCH -J itest-" + name + "\n#SBATCH -o " +
                                            dir_->File(name + "-%j.out") + "\n" + body));
    auto r =
        RunShell(fmt::format("cd {} && sbatch --parsable {} {} 2>{}", ShellQuote(dir_->path()),
                             extra, ShellQuote(script), ShellQuote(dir_->File(name + ".err"))));
    std::string err = ReadFileToString(dir_->File(name + ".err")).value_or("");
    EXPECT_EQ(r.exit_code, 0) << err;
    return {std::string(Trim(r.out)), err};
  }

  // scontrol's view of a job (retried briefly: a busy slurmctld may time out a query).
  // Values keep their spaces (Comment=...), as the service's own parser reads them.
  static std::map<std::string, std::string> ShowJob(const std::string& id) {
    std::map<std::string, std::string> kv;
    WaitFor(3, [&] {
      auto records = slurm::ParseScontrolRecords(Sh("scontrol show job -o " + id));
      if (!records.empty()) kv = records.front();
      return kv.count("JobState") > 0;
    });
    return kv;
  }

  static json FindFailure(const std::string& job_id) {
    json failures = Get("/v1/failures");
    if (!failures.is_object()) return json();
    for (const auto& f : failures["failures"])
      if (f["job_id"] == job_id) return f;
    return json();
  }

  // Every node with its state, drain reason and when the reason was set, for failure messages.
  static std::string NodeStates() {
    return Sh("sinfo -h -N -o '%N %T reason=%E set=%H by=%u'") + Sh("squeue -h -o '%i %j %T %N'") +
           Sh("pgrep -af 'slurmstepd: \\[' || true") + "serve.log (tail):\n" +
           Sh("tail -n 30 " + ShellQuote(dir_->File("serve.log")));
  }

  // Waits until no test job is left and every node accepts work (earlier tests kill slurmd,
  // drain and resume nodes; Slurm settles a restarted node in its own time).
  static bool WaitForSettledCluster(double seconds) {
    return WaitFor(seconds, [] {
      if (!Trim(Sh("squeue -h -o '%j' | grep '^itest-' || true")).empty()) return false;
      // A step orphaned by the killed slurmd must be gone too, or Slurm may still act on it.
      // Only this cluster's steps (their SLURM_CONF): other instances may run side by side.
      if (!Trim(Sh("for p in $(pgrep -f 'slurmstepd: \\[' || true); do tr '\\0' '\\n' "
                   "</proc/$p/environ 2>/dev/null | grep -qx \"SLURM_CONF=$SLURM_CONF\" && "
                   "echo $p; done; true"))
               .empty())
        return false;
      std::string states = Sh("sinfo -h -N -o '%T'");
      for (auto line : Split(states, '\n')) {
        line = Trim(line);
        if (!line.empty() && line != "idle") return false;
      }
      return !Trim(states).empty();
    });
  }

  static std::vector<json> ActionsFor(const std::string& job_id) {
    std::vector<json> out;
    json actions = Get("/v1/actions");
    if (!actions.is_object()) return out;
    for (const auto& a : actions["actions"])
      if (a["job_id"] == job_id) out.push_back(a);
    return out;
  }

  static inline std::string skip_reason_;
  static inline std::string conf_dir_, jobcomp_, submit_conf_, saved_submit_conf_;
  static inline schedmate::testing::TempDir* dir_ = nullptr;
  static inline pid_t pid_ = -1;
  static inline int port_ = 0;
  static inline int64_t failures_before_restart_ = 0;
};

TEST_F(SlurmIntegration, SubmittedJobGetsEstimateAndTimeLimitWithinTwoSeconds) {
  auto t0 = Clock::now();
  auto [id, err] = Submit("estimate", "sleep 2\n");
  double submit_s = Since(t0);
  EXPECT_NE(err.find("schedmate: estimated run time"), std::string::npos) << err;
  EXPECT_NE(err.find("time limit set to"), std::string::npos) << err;
  auto job = ShowJob(id);
  EXPECT_NE(job["TimeLimit"], "UNLIMITED");
  EXPECT_NE(Sh("scontrol show job " + id).find("schedmate: est"), std::string::npos);  // Comment
  bool predicted = WaitFor(2.0, [&] {
    json j = Get("/v1/jobs/" + id);
    return j.is_object() && j["prediction"].is_object();
  });
  double api_s = Since(t0);
  EXPECT_TRUE(predicted) << "no prediction in the API within 2 s";
  EXPECT_LT(submit_s, 2.0);
  json j = Get("/v1/jobs/" + id);
  EXPECT_FALSE(j["prediction"]["explanation"].get<std::string>().empty());
  std::cout << fmt::format(
      "[measure] submit->estimate+limit (sbatch returns) {:.3f}s; submit->prediction in API "
      "{:.3f}s\n",
      submit_s, api_s);
}

TEST_F(SlurmIntegration, RunningJobMetricsAppearInApi) {
  auto [id, err] = Submit(
      "metrics",
      "for i in $(seq 1 200); do echo \"step $i/200 loss 0.$((200 - i))\"; sleep 0.1; done\n",
      "--gres=gpu:1");
  bool seen = WaitFor(15, [&] {
    json j = Get("/v1/jobs/" + id);
    return j.is_object() && j["metrics"].is_object() && j["metrics"]["step"].is_number() &&
           j["metrics"]["step"].get<int64_t>() >= 2;
  });
  ASSERT_TRUE(seen) << Get("/v1/jobs/" + id).dump();
  json j = Get("/v1/jobs/" + id);
  EXPECT_EQ(j["metrics"]["total_steps"], 200);
  EXPECT_TRUE(j["metrics"]["loss"].is_number());
  json series = Get("/v1/jobs/" + id + "/metrics");
  ASSERT_TRUE(series.is_object());
  EXPECT_GE(series["samples"].size(), 1u);
  httplib::Client client("127.0.0.1", port_);
  // Log reads need the token (api.serve_logs: token, the default).
  auto log = client.Get(("/v1/jobs/" + id + "/log?bytes=100").c_str(),
                        {{"Authorization", "Bearer itest-token"}});
  ASSERT_TRUE(log);
  EXPECT_EQ(log->status, 200);
  EXPECT_NE(log->body.find("step"), std::string::npos);
  RunShell("scancel " + id);
}

// Issue 12's semantic loop for running jobs, measured: the remaining time the API reports for a
// running job, taken a third of the way in, against the time the job really ended (Slurm's
// EndTime). A job printing progress gets it from its log ("tracker"); one that prints nothing
// falls back to the advisor's distribution conditioned on its age (or the limit / default).
TEST_F(SlurmIntegration, RemainingTimeOfARunningJobAgainstItsActualEnd) {
  auto [logged, err1] =
      Submit("remain-log",
             "for i in $(seq 1 60); do echo \"step $i/60 loss 0.$((60 - i))\"; sleep 0.5; done\n",
             "--gres=gpu:1 -t 5");
  auto [silent, err2] = Submit("remain-silent", "sleep 30\n", "--gres=gpu:1 -t 5");
  struct Reading {
    std::string source;
    std::chrono::system_clock::time_point predicted_end;
  };
  auto read = [&](const std::string& id, Reading& r) {
    json j = Get("/v1/jobs/" + id);
    if (!j.is_object() || !j["remaining"].is_object() || !j["start"].is_number()) return false;
    if (std::time(nullptr) - j["start"].get<int64_t>() < 10) return false;  // a third in
    r.source = j["remaining"]["source"].get<std::string>();
    r.predicted_end = std::chrono::system_clock::now() +
                      std::chrono::seconds(j["remaining"]["remaining_s"].get<int64_t>());
    return true;
  };
  Reading from_log, from_history;
  ASSERT_TRUE(WaitFor(40, [&] { return read(logged, from_log); })) << Get("/v1/jobs/" + logged);
  ASSERT_TRUE(WaitFor(40, [&] { return read(silent, from_history); })) << Get("/v1/jobs/" + silent);
  EXPECT_EQ(from_log.source, "tracker");
  EXPECT_NE(from_history.source, "tracker");
  auto ended = [&](const std::string& id) {
    std::optional<std::chrono::system_clock::time_point> end;
    WaitFor(60, [&] {
      auto kv = ShowJob(id);
      if (kv["JobState"] != "COMPLETED" && kv["JobState"] != "FAILED") return false;
      end = SlurmTime(kv["EndTime"]);
      return end.has_value();
    });
    return end;
  };
  auto log_end = ended(logged), silent_end = ended(silent);
  ASSERT_TRUE(log_end && silent_end) << NodeStates();
  auto error_s = [](auto predicted, auto actual) {
    return std::abs(std::chrono::duration<double>(predicted - actual).count());
  };
  const double log_error = error_s(from_log.predicted_end, *log_end);
  const double silent_error = error_s(from_history.predicted_end, *silent_end);
  std::cout << fmt::format(
      "[measure] remaining time a third into the run vs the actual end: from the log (tracker) "
      "{:.1f} s off on a 30 s job; without progress lines ({}) {:.1f} s off on a 30 s job\n",
      log_error, from_history.source, silent_error);
  // The log's ETA is the job's own step time x steps left: seconds off, Slurm's whole-second
  // EndTime and the 0.25 s poll included.
  EXPECT_LE(log_error, 5.0);
}

TEST_F(SlurmIntegration, InfraFailureDrainsNodeRequeuesWithBackoffAndExclusion) {
  std::string marker = dir_->File("infra-marker");
  auto t0 = Clock::now();
  auto [id, err] =
      Submit("infra",
             fmt::format("if [ ! -f {0} ]; then touch {0}; echo 'step 3/10 loss 1.0';\n"
                         "  echo 'Saved checkpoint to ckpt/step_3.pt';\n"
                         "  echo \"NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off "
                         "the bus on $SLURMD_NODENAME\";\n"
                         "  exit 1; fi\necho \"second run ok on $SLURMD_NODENAME\"\n",
                         marker),
             "--gres=gpu:1");
  // Poll Slurm and the API together: when did the run fail, when were both actions done?
  std::vector<json> actions;
  double failed_at = -1;
  bool acted = WaitFor(20, [&] {
    if (failed_at < 0) {
      auto now = ShowJob(id);
      if (now["Restarts"] == "0" && now["JobState"] == "FAILED") failed_at = Since(t0);
    }
    actions = ActionsFor(id);
    int done = 0;
    for (const auto& a : actions)
      if (a["outcome"] == "done" && (a["kind"] == "drain" || a["kind"] == "requeue")) ++done;
    return done == 2;
  });
  double reaction = Since(t0);
  ASSERT_TRUE(acted) << json(actions).dump();
  // Right after the requeue: pending, not eligible before now + backoff, the node excluded.
  auto pending = ShowJob(id);
  auto shown_at = std::chrono::system_clock::now();
  json failure = FindFailure(id);
  ASSERT_TRUE(failure.is_object());
  EXPECT_EQ(failure["class"], "infra");
  EXPECT_TRUE(failure["log_captured"].get<bool>());
  EXPECT_EQ(failure["checkpoint"], "ckpt/step_3.pt");
  std::string node;
  json requeue;
  for (const auto& a : actions) {
    if (a["kind"] == "drain") node = a["node"];
    if (a["kind"] == "requeue") requeue = a;
  }
  ASSERT_FALSE(node.empty());
  EXPECT_EQ(pending["JobState"], "PENDING") << Sh("scontrol show job -o " + id);
  EXPECT_EQ(pending["ExcNodeList"], node) << Sh("scontrol show job -o " + id);
  auto eligible = SlurmTime(pending["EligibleTime"]);
  ASSERT_TRUE(eligible.has_value()) << pending["EligibleTime"];
  double ahead = std::chrono::duration<double>(*eligible - shown_at).count();
  EXPECT_GT(ahead, 0.5) << "EligibleTime " << pending["EligibleTime"] << " is not in the future";
  EXPECT_LE(ahead, 4.5);
  EXPECT_NE(pending["Comment"].find("schedmate: requeued after "), std::string::npos)
      << pending["Comment"];
  EXPECT_NE(pending["Comment"].find("(attempt 1/1)"), std::string::npos) << pending["Comment"];
  EXPECT_NE(pending["Comment"].find("resume from ckpt/step_3.pt"), std::string::npos);
  EXPECT_EQ(requeue["attempt"], 1);
  EXPECT_EQ(requeue["exclude_nodes"], json::array({node}));
  EXPECT_EQ(requeue["checkpoint"], "ckpt/step_3.pt");
  EXPECT_NE(requeue["detail"].get<std::string>().find("requeued, attempt 1/1, starts in 3s, "
                                                      "excluding " +
                                                      node),
            std::string::npos)
      << requeue.dump();
  std::string sinfo = Sh("sinfo -h -N -n " + node + " -o '%T|%E'");
  EXPECT_NE(sinfo.find("drain"), std::string::npos) << sinfo;
  EXPECT_NE(sinfo.find("schedmate: "), std::string::npos) << sinfo;
  // The API's job view shows the wait: release time, excluded node, and a start estimate that
  // respects both.
  json view;
  EXPECT_TRUE(WaitFor(2, [&] {
    view = Get("/v1/jobs/" + id);
    return view.is_object() && view["state"] == "PENDING" && view["eligible"].is_number() &&
           view["excluded_nodes"] == json::array({node});
  })) << view.dump();
  if (view["start_estimate"].is_object() && view["start_estimate"]["estimated_start"].is_number()) {
    EXPECT_GE(view["start_estimate"]["estimated_start"].get<int64_t>(),
              view["eligible"].get<int64_t>());
    EXPECT_EQ(view["start_estimate"]["nodes"].dump().find(node), std::string::npos)
        << view["start_estimate"].dump();
  }
  // Requeued with the same id; the second run waits out the backoff and succeeds elsewhere.
  ASSERT_TRUE(WaitFor(20, [&] { return ShowJob(id)["JobState"] == "COMPLETED"; }))
      << Sh("scontrol show job " + id);
  auto done = ShowJob(id);
  EXPECT_EQ(done["Restarts"], "1");
  EXPECT_NE(done["NodeList"], node);
  auto started = SlurmTime(done["StartTime"]);
  ASSERT_TRUE(started.has_value());
  EXPECT_GE(*started, *eligible) << "started before its release time";
  double start_lag = std::chrono::duration<double>(*started - *eligible).count();
  EXPECT_LE(start_lag, 3.0) << "the release nudge did not start it promptly";
  // The first run's log was copied before the requeue overwrote it.
  httplib::Client client("127.0.0.1", port_);
  auto copy = client.Get(fmt::format("/v1/failures/{}/log", failure["id"].get<int64_t>()).c_str(),
                         {{"Authorization", "Bearer itest-token"}});
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->status, 200);
  EXPECT_NE(copy->body.find("Xid"), std::string::npos);
  std::string now_log = ReadFileToString(dir_->File("infra-" + id + ".out")).value_or("");
  EXPECT_EQ(now_log.find("Xid"), std::string::npos) << "the requeued run overwrote the log";
  // Resuming is a state change: refused without the token, done with it.
  auto refused = client.Post(("/v1/nodes/" + node + "/resume").c_str(), "", "text/plain");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  httplib::Headers auth = {{"Authorization", "Bearer itest-token"}};
  auto resumed = client.Post(("/v1/nodes/" + node + "/resume").c_str(), auth, "", "text/plain");
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->status, 200) << resumed->body;
  EXPECT_TRUE(WaitFor(5, [&] {
    return Sh("sinfo -h -N -n " + node + " -o '%T'").find("drain") == std::string::npos;
  }));
  std::cout << fmt::format(
      "[measure] sbatch of an Xid job -> node drained + job requeued with backoff and exclusion "
      "(recorded) {:.3f}s; run seen FAILED by the test at {:.3f}s (failure -> both actions "
      "<= {:.3f}s); release time -> second run started {:.0f}s (Slurm's whole seconds)\n",
      reaction, failed_at, failed_at >= 0 ? reaction - failed_at : reaction, start_lag);
}

TEST_F(SlurmIntegration, RepeatedInfraFailureIsHeldAfterTheRetryBudget) {
  auto t0 = Clock::now();
  auto [id, err] = Submit("flaky",
                          "echo \"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus on "
                          "$SLURMD_NODENAME\"\nexit 1\n",
                          "--gres=gpu:1");
  std::vector<json> actions;
  bool held = WaitFor(30, [&] {
    actions = ActionsFor(id);
    for (const auto& a : actions)
      if (a["kind"] == "hold" && a["outcome"] == "done") return true;
    return false;
  });
  double took = Since(t0);
  ASSERT_TRUE(held) << json(actions).dump(1) << Sh("scontrol show job " + id);
  auto job = ShowJob(id);
  EXPECT_EQ(job["JobState"], "PENDING");
  EXPECT_EQ(job["Reason"], "job_requeued_in_held_state");
  EXPECT_EQ(job["Priority"], "0");
  EXPECT_EQ(job["Restarts"], "2");  // schedmate's requeue, then its requeue-held
  EXPECT_NE(job["Comment"].find("schedmate: held: "), std::string::npos) << job["Comment"];
  EXPECT_NE(job["Comment"].find("retry budget"), std::string::npos) << job["Comment"];
  int requeues = 0, drains = 0;
  bool admin = false;
  std::string drained;
  for (const auto& a : actions) {
    if (a["kind"] == "requeue" && a["outcome"] == "done") ++requeues;
    if (a["kind"] == "drain" && a["outcome"] == "done") {
      ++drains;
      drained = a["node"];
    }
    if (a["kind"] == "hold") {
      EXPECT_NE(a["reason"].get<std::string>().find("retry budget"), std::string::npos) << a.dump();
    }
    if (a["kind"] == "notify_admin") admin = true;
  }
  EXPECT_EQ(requeues, 1);
  EXPECT_EQ(drains, 1);  // the second node is spared by actions.max_drained_nodes=1
  EXPECT_TRUE(admin);
  // Held means held: it does not start again on its own.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(ShowJob(id)["JobState"], "PENDING");
  RunShell("scancel " + id);
  if (!drained.empty()) RunShell("scontrol update NodeName=" + drained + " State=RESUME");
  std::cout << fmt::format(
      "[measure] always-failing Xid job: sbatch -> drained, requeued (3 s backoff), failed again, "
      "held {:.3f}s\n",
      took);
}

// A node dies under a running job (its slurmd is killed): Slurm ends the run NODE_FAIL and
// requeues the job itself; the service drains the node and updates the pending job (exclusion,
// release time) instead of requeueing it again. Takes ~1 minute (SlurmdTimeout=30).
TEST_F(SlurmIntegration, NodeFailRequeuedBySlurmIsExcludedFromTheDeadNode) {
  auto [id, err] =
      Submit("nodefail", "echo \"run on $SLURMD_NODENAME\"\nsleep 600\n", "--gres=gpu:8");
  std::string node;
  ASSERT_TRUE(WaitFor(10, [&] {
    auto j = ShowJob(id);
    node = j["NodeList"];
    return j["JobState"] == "RUNNING";
  }));
  std::string pid_file =
      (std::filesystem::path(conf_dir_).parent_path() / "run" / ("slurmd-" + node + ".pid"))
          .string();
  auto pid = ParseInt(Trim(ReadFileToString(pid_file).value_or("")));
  if (!pid) {
    RunShell("scancel " + id);
    // The first run's step outlived its slurmd; Slurm kills it once the node registers again.
    // Later tests need a clean node, so wait for that (and finish it off if Slurm does not).
    std::string orphan = "pgrep -f 'slurmstepd: \\[" + id + "\\.' || true";
    if (!WaitFor(20, [&] { return Trim(Sh(orphan)).empty(); })) {
      std::cerr << "[itest] orphaned step of job " << id << " still running; killing it\n";
      RunShell("pkill -9 -f 'slurmstepd: \\[" + id + "\\.'");
    }
    GTEST_SKIP() << "no slurmd pid file " << pid_file << " (cluster not from slurm-local.sh)";
  }
  auto t0 = Clock::now();
  ASSERT_EQ(kill(static_cast<pid_t>(*pid), SIGTERM), 0);
  double failed_at = -1;
  std::vector<json> actions;
  bool acted = WaitFor(120, [&] {
    if (failed_at < 0 && ShowJob(id)["JobState"] != "RUNNING") failed_at = Since(t0);
    actions = ActionsFor(id);
    int done = 0;
    for (const auto& a : actions)
      if (a["outcome"] == "done" && (a["kind"] == "drain" || a["kind"] == "requeue")) ++done;
    return done == 2;
  });
  double acted_at = Since(t0);
  auto job = ShowJob(id);
  json failure = FindFailure(id);
  // Bring the node back whatever happened.
  RunShell("slurmd -N " + node);
  EXPECT_TRUE(WaitFor(20, [&] {
    RunShell("scontrol update NodeName=" + node + " State=RESUME 2>/dev/null");
    return Sh("sinfo -h -N -n " + node + " -o '%T'").find("idle") != std::string::npos ||
           Sh("sinfo -h -N -n " + node + " -o '%T'").find("alloc") != std::string::npos ||
           Sh("sinfo -h -N -n " + node + " -o '%T'").find("mix") != std::string::npos;
  })) << Sh("sinfo -N");
  RunShell("scancel " + id);
  ASSERT_TRUE(acted) << json(actions).dump(1) << Sh("scontrol show job " + id);
  ASSERT_TRUE(failure.is_object());
  EXPECT_EQ(failure["state"], "NODE_FAIL");
  EXPECT_EQ(failure["class"], "infra");
  std::string requeue_detail;
  for (const auto& a : actions)
    if (a["kind"] == "requeue") requeue_detail = a["detail"];
  EXPECT_NE(requeue_detail.find("updated the job Slurm had requeued itself"), std::string::npos)
      << requeue_detail;
  EXPECT_EQ(job["ExcNodeList"], node) << Sh("scontrol show job " + id);
  EXPECT_EQ(job["Restarts"], "1");  // Slurm's requeue only: schedmate did not requeue it again
  std::cout << fmt::format(
      "[measure] slurmd killed -> job off the node (Slurm NODE_FAIL) {:.1f}s; -> drained + "
      "exclusion + delayed release recorded {:.1f}s\n",
      failed_at, acted_at);
}

TEST_F(SlurmIntegration, AppFailureIsNotRequeuedAndItsReasonIsVisible) {
  auto [id, err] =
      Submit("app",
             "echo 'Traceback (most recent call last):'\necho '  File \"train.py\", line 7'\n"
             "echo \"ValueError: learning rate must be positive\"\nexit 3\n");
  json failure;
  ASSERT_TRUE(WaitFor(15, [&] {
    failure = FindFailure(id);
    return failure.is_object();
  }));
  EXPECT_EQ(failure["class"], "app");
  EXPECT_NE(failure["reason"].get<std::string>().find("ValueError: learning rate must be positive"),
            std::string::npos);
  EXPECT_EQ(failure["exit_code"], 3);
  for (const auto& a : ActionsFor(id)) EXPECT_NE(a["kind"], "requeue");
  EXPECT_EQ(ShowJob(id)["Restarts"], "0");
}

TEST_F(SlurmIntegration, EveryPendingJobGetsAStartEstimate) {
  std::vector<std::string> blockers, pending;
  for (int i = 0; i < 2; ++i)
    blockers.push_back(Submit(fmt::format("block{}", i), "sleep 30\n", "--gres=gpu:8").first);
  for (int i = 0; i < 3; ++i)
    pending.push_back(Submit(fmt::format("wait{}", i), "sleep 1\n", "--gres=gpu:4 -t 5").first);
  json estimates;
  bool all = WaitFor(10, [&] {
    estimates = Get("/v1/start-estimates");
    if (!estimates.is_object()) return false;
    int with_time = 0;
    for (const auto& e : estimates["pending"]) {
      for (const auto& id : pending)
        if (e["job_id"] == id && e["estimated_start"].is_number() &&
            !e["pending_reason"].get<std::string>().empty())
          ++with_time;
    }
    return with_time == 3;
  });
  EXPECT_TRUE(all) << estimates.dump(1);
  for (const auto& id : blockers) RunShell("scancel " + id);
  for (const auto& id : pending) RunShell("scancel " + id);
}

TEST_F(SlurmIntegration, LuaHookAcceptsJobsWhileServiceIsDown) {
  json failures = Get("/v1/failures");
  ASSERT_TRUE(failures.is_object());
  failures_before_restart_ = static_cast<int64_t>(failures["failures"].size());
  ASSERT_GE(failures_before_restart_, 2);
  StopService(SIGKILL);  // a crash, not a clean stop
  auto t0 = Clock::now();
  auto [id, err] = Submit("nosvc", "sleep 1\n");
  double took = Since(t0);
  EXPECT_FALSE(id.empty());
  EXPECT_LT(took, 2.0);
  EXPECT_EQ(err.find("schedmate"), std::string::npos) << err;
  EXPECT_EQ(ShowJob(id)["TimeLimit"], "UNLIMITED")
      << "job " << id << ": " << Sh("scontrol show job -o " + id);  // accepted unchanged
  std::cout << fmt::format("[measure] sbatch with the service down {:.3f}s\n", took);
}

TEST_F(SlurmIntegration, RestartAfterKillLosesNothing) {
  StartService();
  json failures = Get("/v1/failures");
  ASSERT_TRUE(failures.is_object());
  EXPECT_EQ(static_cast<int64_t>(failures["failures"].size()), failures_before_restart_);
  json history = Get("/v1/history?limit=1000");
  ASSERT_TRUE(history.is_object());
  EXPECT_GE(history["jobs"].size(), 3u);
  // And it keeps working: the loop ticks again.
  EXPECT_TRUE(WaitFor(5, [&] {
    json h = Get("/healthz");
    return h.is_object() && h["slurm_ok"] == true && h["ticks"].get<int64_t>() >= 1;
  }));
}

// Last: it swaps in a dry-run instance with its own database (the suite's tear-down stops it).
TEST_F(SlurmIntegration, DryRunShowsTheWholePlanAndTouchesNothing) {
  ASSERT_TRUE(WaitForSettledCluster(90)) << NodeStates();
  // A fresh database acts on runs that ended up to 2 s before it started (Slurm's whole seconds),
  // so a dry run started right after the node-fail test would simulate draining that node and
  // report the dry job's node as "already drained". Start it once the last run is older.
  ASSERT_TRUE(WaitFor(10, [&] {
    std::error_code ec;
    auto written = std::filesystem::last_write_time(jobcomp_, ec);
    return ec || std::filesystem::file_time_type::clock::now() - written > std::chrono::seconds(4);
  }));
  StartService("--dry-run", "data-dry-run");
  std::string before = NodeStates();
  auto [id, err] = Submit("dry",
                          "echo 'Saved checkpoint to ckpt/step_9.pt'\n"
                          "echo \"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus on "
                          "$SLURMD_NODENAME\"\nexit 1\n",
                          "--gres=gpu:1");
  std::vector<json> actions;
  ASSERT_TRUE(WaitFor(15, [&] {
    actions = ActionsFor(id);
    return actions.size() >= 3;
  })) << json(actions).dump(1);
  std::string node;
  for (const auto& a : actions) {
    EXPECT_TRUE(a["dry_run"].get<bool>()) << a.dump();
    if (a["kind"] == "drain") {
      node = a["node"];
      EXPECT_EQ(a["outcome"], "dry-run") << "nodes before submitting:\n"
                                         << before << "nodes now:\n"
                                         << NodeStates() << json(actions).dump(1);
      EXPECT_EQ(a["detail"], "would drain " + node);
    }
    if (a["kind"] == "requeue") {
      EXPECT_EQ(a["outcome"], "dry-run");
      EXPECT_NE(a["detail"].get<std::string>().find("would requeue, attempt 1/1, starts in 3s, "
                                                    "excluding "),
                std::string::npos)
          << a.dump();
      EXPECT_EQ(a["checkpoint"], "ckpt/step_9.pt");
    }
  }
  ASSERT_FALSE(node.empty()) << json(actions).dump(1);
  // Only the dry job's failure was acted on: earlier runs ended before this database watched,
  // so they are recorded, not (even simulated) acted on.
  json all = Get("/v1/actions");
  for (const auto& a : all["actions"]) {
    if (a["job_id"] != id) {
      EXPECT_NE(a["outcome"], "dry-run") << a.dump();
    }
  }
  // Nothing happened in Slurm.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto job = ShowJob(id);
  EXPECT_EQ(job["JobState"], "FAILED");
  EXPECT_EQ(job["Restarts"], "0");
  EXPECT_EQ(job["ExcNodeList"], "(null)");
  std::string state(Trim(Sh("sinfo -h -N -n " + node + " -o '%T'")));
  EXPECT_FALSE(state.empty());
  EXPECT_EQ(state.find("drain"), std::string::npos) << NodeStates();
  json health = Get("/v1/actions");
  EXPECT_EQ(health["dry_run"], true);
}

}  // namespace
}  // namespace schedmate::service
