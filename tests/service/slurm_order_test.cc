// The order mode against a REAL Slurm (scripts/slurm-local.sh start) and the real
// `schedmate serve --slurm` binary; SKIPS when no Slurm answers. Every case fills both nodes
// with two long filler jobs so that what it submits waits, checks what schedmate did to the
// priorities (through squeue, not through schedmate's own API alone), and cancels its jobs.
// The advisor is the basic engine: with no history it predicts half a job's time limit, so a
// `-t 1` job is short and a `-t 10` job long.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "core/file_util.h"
#include "core/strings.h"
#include "local_slurm.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using nlohmann::json;
using schedmate::testing::RunShell;
using schedmate::testing::ShellQuote;
using SteadyClock = std::chrono::steady_clock;

bool WaitFor(double seconds, const std::function<bool()>& probe) {
  auto t0 = SteadyClock::now();
  while (std::chrono::duration<double>(SteadyClock::now() - t0).count() < seconds) {
    if (probe()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return probe();
}

std::string Sh(const std::string& cmd) { return RunShell(cmd).out; }

class SlurmOrder : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    const std::string path = testing::LocalSlurmConf(skip_reason_);
    if (path.empty()) return;
    dir_ = new schedmate::testing::TempDir();
    // The service learns finished runs only from the seeded history below, not from Slurm's
    // jobcomp log, which holds whatever other suites ran before (their 1-second sleeps would
    // decide the order instead). Ordering needs the queue, not completions.
    jobcomp_ = dir_->File("jobcomp-empty.txt");
    // Time limits (minutes) no other suite uses, varied per run: the advisor's "same resources"
    // evidence is then the seeded history, not the jobs an earlier run left in squeue (Slurm
    // shows ended jobs for MinJobAge, 5 minutes).
    long_limit_ = 11 + static_cast<int>(getpid() % 6);
    short_limit_ = 6 + static_cast<int>(getpid() % 3);
    ASSERT_TRUE(WriteStringToFile(jobcomp_, "").ok());
    WriteSeedHistory();
  }

  // The site's history the advisor learns from, as an sacct export: this user's otest-long*
  // jobs ran about 5 minutes, otest-short about 20 s, all in the last hour. The jobs the cases
  // submit are named alike, so the order the service wants rests on what history says, as in
  // production (the sleeps themselves are kept short so the suite stays quick).
  static void WriteSeedHistory() {
    const std::string user(Trim(Sh("id -un")));
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    std::string rows =
        "JobID|JobName|User|Partition|Submit|Start|End|Elapsed|Timelimit|AllocTRES|NNodes|State\n";
    auto iso = [](int64_t t) {
      std::time_t tt = static_cast<std::time_t>(t);
      std::tm tm{};
      localtime_r(&tt, &tm);
      char buf[32];
      std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
      return std::string(buf);
    };
    int id = 900000;
    for (int k = 0; k < 4; ++k) {
      for (const auto& [name, seconds, limit] :
           {std::tuple<const char*, int, int>{"otest-long1", 300, long_limit_},
            {"otest-long2", 300, long_limit_},
            {"otest-short", 20, short_limit_}}) {
        const int64_t end = now - 1800 + k * 300;
        rows += fmt::format(
            "{}|{}|{}|gpu|{}|{}|{}|00:{:02}:{:02}|00:{:02}:00|gres/gpu=8,node=1|1|COMPLETED\n",
            ++id, name, user, iso(end - seconds - 5), iso(end - seconds), iso(end), seconds / 60,
            seconds % 60, limit);
      }
    }
    ASSERT_TRUE(WriteStringToFile(dir_->File("seed-history.txt"), rows).ok());
  }

  static void TearDownTestSuite() {
    if (dir_ == nullptr) return;
    CancelOurs();
    delete dir_;
    dir_ = nullptr;
  }

 protected:
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ++case_;
  }
  void TearDown() override {
    if (!skip_reason_.empty()) return;
    StopService(SIGTERM);
    CancelOurs();
  }

  static void CancelOurs() {
    RunShell("squeue -h -o '%i %j' | awk '$2 ~ /^otest-/ {print $1}' | xargs -r scancel");
    WaitFor(10, [] { return Trim(Sh("squeue -h -o '%j' | grep -c '^otest-' || true")) == "0"; });
  }

  // serve in `mode` with `extra` flags; a fresh data directory per case unless `data` is given.
  void StartService(const std::string& mode, const std::string& extra = "", std::string data = "") {
    if (data.empty()) data = fmt::format("data{}", case_);
    std::filesystem::create_directories(dir_->File(data));
    if (!std::filesystem::exists(dir_->File(data + "/schedmate.db"))) {
      auto seeded = schedmate::testing::RunSchedmate(
          fmt::format("history import --format sacct --store {} {}",
                      ShellQuote(dir_->File(data + "/schedmate.db")),
                      ShellQuote(dir_->File("seed-history.txt"))));
      ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
    }
    std::string port_file = dir_->File("port");
    std::filesystem::remove(port_file);
    std::string cmd = fmt::format(
        "{} serve --slurm --data-dir {} --jobcomp {} --port 0 --port-file {} "
        "--poll 0.25 --submit-policy off --mode {} {} >>{} 2>&1 & echo $!",
        ShellQuote(schedmate::testing::SchedmateBinary()), ShellQuote(dir_->File(data)),
        ShellQuote(jobcomp_), ShellQuote(port_file), mode, extra,
        ShellQuote(dir_->File("serve.log")));
    pid_ = static_cast<pid_t>(ParseInt(Trim(Sh(cmd))).value_or(-1));
    ASSERT_GT(pid_, 0);
    ASSERT_TRUE(WaitFor(10, [&] { return std::filesystem::exists(port_file); }))
        << ReadFileToString(dir_->File("serve.log")).value_or("");
    port_ = static_cast<int>(ParseInt(Trim(ReadFileToString(port_file).value_or(""))).value_or(0));
    ASSERT_GT(port_, 0);
  }

  void StopService(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    auto gone = [](pid_t pid) {
      auto stat = ReadFileToString(fmt::format("/proc/{}/stat", pid));
      return !stat.ok() || stat->find(") Z ") != std::string::npos;
    };
    WaitFor(10, [&] { return gone(pid_); });
    if (!gone(pid_)) kill(pid_, SIGKILL);
    WaitFor(5, [&] { return gone(pid_); });
    pid_ = -1;
  }

  json Get(const std::string& path) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(5);
    auto res = client.Get(path.c_str());
    if (!res || res->status != 200) return json();
    return json::parse(res->body, nullptr, false);
  }

  // sbatch a `sleep seconds` job named otest-<name>; returns its id.
  std::string Submit(const std::string& name, int gpus, int seconds, int limit_min,
                     const std::string& extra = "") {
    auto r = RunShell(fmt::format(
        "cd {} && sbatch --parsable -J otest-{} -o {} --gres=gpu:{} -t {} {} --wrap 'sleep {}'",
        ShellQuote(dir_->path()), name, ShellQuote(dir_->File("otest-%j.out")), gpus, limit_min,
        extra, seconds));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return std::string(Trim(r.out));
  }

  // Two 8-GPU jobs holding both nodes until cancelled; returns once both run.
  std::vector<std::string> FillCluster() {
    std::vector<std::string> ids = {Submit("fill1", 8, 600, 20), Submit("fill2", 8, 600, 20)};
    EXPECT_TRUE(WaitFor(20, [&] {
      return State(ids[0]) == "RUNNING" && State(ids[1]) == "RUNNING";
    })) << Sh("squeue -o '%i %j %T %R'");
    return ids;
  }

  static std::string State(const std::string& id) {
    return std::string(Trim(Sh("squeue -h -j " + id + " -o '%T' 2>/dev/null")));
  }
  // Priority of each of `ids` as squeue shows it now.
  static std::map<std::string, int64_t> Priorities(const std::vector<std::string>& ids) {
    std::map<std::string, int64_t> out;
    const std::string text = Sh("squeue -h -o '%i %Q'");  // Split returns views into it
    for (const auto& line : Split(text, '\n')) {
      auto parts = Split(Trim(line), ' ');
      if (parts.size() != 2) continue;
      std::string id(parts[0]);
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
      out[id] = ParseInt(parts[1]).value_or(-1);
    }
    return out;
  }
  static bool Started(const std::string& id) {
    std::string s = State(id);
    return s == "RUNNING" || s == "COMPLETING" || s == "COMPLETED" || s.empty();
  }

  // The first of `ids` that Slurm starts after one node is freed.
  std::string FirstToStart(const std::vector<std::string>& ids, const std::string& freed) {
    RunShell("scancel " + freed);
    std::string first;
    EXPECT_TRUE(WaitFor(30, [&] {
      for (const auto& id : ids) {
        if (Started(id)) {
          first = id;
          return true;
        }
      }
      return false;
    })) << Sh("squeue -o '%i %j %T %Q %R'");
    return first;
  }

  // Waits until the service's last pass ranked `job` first and Slurm shows its target priority.
  bool RankedFirstAndApplied(const std::string& job) {
    return WaitFor(15, [&] {
      json s = Get("/v1/scheduling");
      if (!s.is_object() || !s["ranking"].is_array() || s["ranking"].empty()) return false;
      const json& top = s["ranking"][0];
      if (top["job_id"] != job) return false;
      auto now = Priorities({job});
      return now.count(job) && now[job] == top["target_priority"].get<int64_t>();
    });
  }

  static inline std::string skip_reason_;
  static inline std::string jobcomp_;
  static inline int long_limit_ = 13;
  static inline int short_limit_ = 6;
  static inline schedmate::testing::TempDir* dir_ = nullptr;
  static inline int case_ = 0;
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST_F(SlurmOrder, OrderModeStartsShortJobBehindLongOnesFirst) {
  StartService("order");
  auto fill = FillCluster();
  std::string long1 = Submit("long1", 8, 2, long_limit_);
  std::string long2 = Submit("long2", 8, 2, long_limit_);
  std::string shorty = Submit("short", 8, 1, short_limit_);
  ASSERT_TRUE(RankedFirstAndApplied(shorty)) << Get("/v1/scheduling").dump(1);
  json s = Get("/v1/scheduling");
  EXPECT_EQ(s["mode"], "order");
  EXPECT_EQ(s["policy"], "schedmate");
  EXPECT_GE(s["changes_total"].get<int64_t>(), 3);
  bool recorded = false;
  for (const auto& a : s["recent_changes"])
    if (a["job_id"] == shorty && a["kind"] == "priority" && a["outcome"] == "done") recorded = true;
  EXPECT_TRUE(recorded) << s["recent_changes"].dump(1);
  EXPECT_EQ(FirstToStart({long1, long2, shorty}, fill[0]), shorty);
}

TEST_F(SlurmOrder, AdviseModeLeavesSlurmsOrder) {
  StartService("advise");
  auto fill = FillCluster();
  std::string long1 = Submit("long1", 8, 2, long_limit_);
  std::string long2 = Submit("long2", 8, 2, long_limit_);
  std::string shorty = Submit("short", 8, 1, short_limit_);
  // The service has seen (and predicted) all three before the node frees.
  ASSERT_TRUE(WaitFor(10, [&] {
    json jobs = Get("/v1/jobs");
    int seen = 0;
    if (jobs.is_object())
      for (const auto& j : jobs["jobs"])
        if (j["id"] == long1 || j["id"] == long2 || j["id"] == shorty) ++seen;
    return seen == 3;
  }));
  auto before = Priorities({long1, long2, shorty});
  EXPECT_EQ(Get("/v1/scheduling")["mode"], "advise");
  EXPECT_EQ(FirstToStart({long1, long2, shorty}, fill[0]), long1);
  auto after = Priorities({long2, shorty});
  EXPECT_EQ(after[shorty], before[shorty]);
  EXPECT_EQ(after[long2], before[long2]);
}

TEST_F(SlurmOrder, DryRunPlansButChangesNoPriority) {
  auto fill = FillCluster();
  std::vector<std::string> jobs = {Submit("long1", 8, 2, long_limit_),
                                   Submit("long2", 8, 2, long_limit_),
                                   Submit("short", 8, 1, short_limit_)};
  auto before = Priorities(jobs);
  ASSERT_EQ(before.size(), 3u);
  StartService("order", "--dry-run");
  // The plan is there: the short job first, with a target other than its priority.
  ASSERT_TRUE(WaitFor(15, [&] {
    json s = Get("/v1/scheduling");
    return s.is_object() && s["ranking"].size() == 3 && s["ranking"][0]["job_id"] == jobs[2] &&
           s["ranking"][0]["target_priority"] != s["ranking"][0]["priority"];
  })) << Get("/v1/scheduling").dump(1);
  json s = Get("/v1/scheduling");
  EXPECT_EQ(s["dry_run"], true);
  EXPECT_EQ(s["changes_total"], 0);
  int dry = 0;
  for (const auto& a : s["recent_changes"]) dry += a["outcome"] == "dry-run" ? 1 : 0;
  EXPECT_EQ(dry, 3) << s["recent_changes"].dump(1);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // several more passes
  EXPECT_EQ(Priorities(jobs), before);
  StopService(SIGTERM);
  EXPECT_EQ(Priorities(jobs), before);
  (void)fill;
}

TEST_F(SlurmOrder, StopRestoresEveryPriorityItChanged) {
  auto fill = FillCluster();
  std::vector<std::string> jobs = {Submit("a", 8, 2, 10), Submit("b", 4, 2, 5),
                                   Submit("c", 8, 1, 1), Submit("d", 2, 1, 2)};
  std::string nice = Submit("nice", 8, 1, 1, "--nice=50");  // the user's choice: left alone
  auto before = Priorities(jobs);
  auto nice_before = Priorities({nice});
  ASSERT_EQ(before.size(), 4u);
  StartService("order");
  ASSERT_TRUE(WaitFor(15, [&] {
    auto now = Priorities(jobs);
    for (const auto& [id, p] : now)
      if (p == before[id]) return false;
    return now.size() == 4;
  })) << Get("/v1/scheduling").dump(1);
  json s = Get("/v1/scheduling");
  EXPECT_EQ(s["outstanding"], 4);
  ASSERT_EQ(s["left_alone"].size(), 1u);
  EXPECT_EQ(s["left_alone"][0]["job_id"], nice);
  EXPECT_EQ(Priorities({nice}), nice_before);
  StopService(SIGTERM);
  EXPECT_EQ(Priorities(jobs), before);
  EXPECT_EQ(Priorities({nice}), nice_before);
  (void)fill;
}

TEST_F(SlurmOrder, KillNineThenRestartOrRestoreFlagPutsPrioritiesBack) {
  auto fill = FillCluster();
  std::vector<std::string> jobs = {Submit("a", 8, 2, 10), Submit("b", 8, 1, 1),
                                   Submit("c", 8, 1, 3)};
  auto before = Priorities(jobs);
  auto changed = [&] {
    auto now = Priorities(jobs);
    for (const auto& [id, p] : now)
      if (p == before[id]) return false;
    return now.size() == jobs.size();
  };
  // 1. kill -9, then a restart (advise mode) restores at start.
  StartService("order", "", "kill9");
  ASSERT_TRUE(WaitFor(15, changed));
  StopService(SIGKILL);
  EXPECT_TRUE(changed()) << "a killed service cannot restore anything itself";
  StartService("advise", "", "kill9");
  EXPECT_TRUE(WaitFor(10, [&] { return Priorities(jobs) == before; }))
      << Sh("squeue -o '%i %j %T %Q %R'");
  StopService(SIGTERM);
  // 2. kill -9, then `serve --restore`.
  StartService("order", "", "kill9");
  ASSERT_TRUE(WaitFor(15, changed));
  StopService(SIGKILL);
  auto r = schedmate::testing::RunSchedmate(
      fmt::format("serve --slurm --data-dir {} --jobcomp {} --restore",
                  ShellQuote(dir_->File("kill9")), ShellQuote(jobcomp_)));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Priorities(jobs), before);
  json out = json::parse(r.out.substr(r.out.find('{')), nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  EXPECT_EQ(out["failed"], 0);
  EXPECT_EQ(out["restored"], 3);
  (void)fill;
}

}  // namespace
}  // namespace schedmate::service
