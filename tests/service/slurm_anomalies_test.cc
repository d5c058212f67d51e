// Anomalies on a REAL Slurm (scripts/slurm-local.sh start) through the real `schedmate serve
// --slurm`: GPU telemetry comes from the scripted nvidia-smi the script puts on the nodes' task
// PATH, controlled per job by $SCHEDMATE_SLURM_DIR/gpu/<job id>, which this test writes.
//
// Four jobs run at once:
//   idle      2 GPUs holding memory; busy, then a short idle dip (shorter than the minimum
//             duration: never flagged), then idle for good: idle_gpu
//   over      4 GPUs, 4 CPUs, 4 GiB: one GPU works, the log says world_size=1, the CPUs sleep:
//             over_requested (and, when the Slurm allocates memory, SLURM_MEMORY=1 in
//             scripts/slurm-local.sh, sstat's few MiB against the 4 GiB: --mem=1G)
//   stall     progress lines for 6 s, then silence: stalled
//   clean     2 busy GPUs, world_size=2, a progress line every second: never flagged
// Each is flagged no sooner than its minimum duration after the condition (for over, the job's
// start) and no later than two poll intervals after that (two passes, if a pass took longer than
// a poll on a loaded machine), plus the measured latency: twice the longest pass (`last_tick_s`
// from /healthz: the pass that probes and the one that publishes the flag), the test's own API
// poll (0.3 s) and, for over, 1 s because Slurm's start times are whole seconds. They show in
// GET /v1/anomalies and schedmate_anomalies{kind}. Prints "[measure]" lines. Skips when no Slurm
// answers.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
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
using WallClock = std::chrono::system_clock;

constexpr double kPoll = 2.0;        // service.poll_interval_s (and usage.interval_s)
constexpr double kMinIdle = 6.0;     // anomalies.idle_gpu_min_s
constexpr double kMinOver = 6.0;     // anomalies.over_requested_min_s
constexpr double kMinStalled = 4.0;  // anomalies.stalled_min_s
constexpr double kStallAfter = 4.0;  // tracker.stall_after_s
constexpr int kMinMemoryMib = 2048;  // anomalies.min_memory_mib
constexpr double kApiPoll = 0.3;     // the test reads /v1/anomalies every 0.2 s (+ the request)
constexpr double kStartResolution = 1.0;  // squeue's start time is in whole seconds

double Now() { return std::chrono::duration<double>(WallClock::now().time_since_epoch()).count(); }

std::string Sh(const std::string& cmd) { return std::string(Trim(RunShell(cmd).out)); }

bool WaitFor(double seconds, const std::function<bool()>& probe) {
  const double end = Now() + seconds;
  while (Now() < end) {
    if (probe()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return probe();
}

class SlurmAnomalies : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    const std::string conf = testing::LocalSlurmConf(skip_);
    if (conf.empty()) return;
    const auto slurm_dir = std::filesystem::path(conf).parent_path().parent_path();
    gpu_dir_ = (slurm_dir / "gpu").string();
    if (!std::filesystem::exists(slurm_dir / "bin" / "nvidia-smi")) {
      skip_ =
          "this local Slurm has no scripted nvidia-smi (restart it with scripts/slurm-local.sh)";
      return;
    }
    dir_ = new schedmate::testing::TempDir();
    ASSERT_OK(WriteStringToFile(
        dir_->File("schedmate.yaml"),
        fmt::format("usage:\n  interval_s: {}\n"
                    "anomalies:\n  idle_gpu_min_s: {}\n  over_requested_min_s: {}\n"
                    "  stalled_min_s: {}\n  min_memory_mib: {}\n"
                    "tracker:\n  stall_after_s: {}\n",
                    kPoll, kMinIdle, kMinOver, kMinStalled, kMinMemoryMib, kStallAfter)));
    const std::string port_file = dir_->File("port");
    pid_ = static_cast<pid_t>(
        ParseInt(
            Sh(fmt::format("{} serve --slurm --config {} --data-dir {} --port 0 --port-file "
                           "{} --poll {} >>{} 2>&1 & echo $!",
                           ShellQuote(schedmate::testing::SchedmateBinary()),
                           ShellQuote(dir_->File("schedmate.yaml")), ShellQuote(dir_->File("data")),
                           ShellQuote(port_file), kPoll, ShellQuote(dir_->File("serve.log")))))
            .value_or(-1));
    ASSERT_GT(pid_, 0);
    ASSERT_TRUE(WaitFor(10, [&] { return std::filesystem::exists(port_file); }))
        << ReadFileToString(dir_->File("serve.log")).value_or("");
    port_ = static_cast<int>(ParseInt(Trim(ReadFileToString(port_file).value_or(""))).value_or(0));
    ASSERT_GT(port_, 0);
  }

  static void TearDownTestSuite() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      WaitFor(5, [] {
        return kill(pid_, 0) != 0 || Sh(fmt::format("ps -o stat= -p {}", pid_)) == "Z";
      });
    }
    RunShell("squeue -h -o '%i %j' | awk '$2 ~ /^atest-/ {print $1}' | xargs -r scancel");
    for (const auto& id : jobs_) std::filesystem::remove(gpu_dir_ + "/" + id);
    delete dir_;
    dir_ = nullptr;
  }

 protected:
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  static json Get(const std::string& path) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(5);
    auto res = client.Get(path.c_str());
    if (!res || res->status != 200) return json();
    if (path == "/metrics") return json(res->body);
    return json::parse(res->body, nullptr, false);
  }

  // Submits a held job running `body`, writes its GPU file, releases it.
  static std::string Submit(const std::string& name, const std::string& args,
                            const std::string& body, const std::string& gpus) {
    const std::string script = dir_->File(name + ".sh");
    EXPECT_OK(WriteStringToFile(script, "#!/bin/bash\n" + body + "\n"));
    const std::string id =
        Sh(fmt::format("sbatch --parsable --hold -J atest-{} --chdir {} -o {} --time=10 {} {}",
                       name, ShellQuote(dir_->path()), ShellQuote(dir_->File(name + "-%j.out")),
                       args, ShellQuote(script)));
    EXPECT_TRUE(ParseInt(id).has_value()) << id;
    jobs_.push_back(id);
    SetGpus(id, gpus);
    RunShell("scontrol release " + id);
    return id;
  }

  static void SetGpus(const std::string& id, const std::string& lines) {
    ASSERT_OK(WriteStringToFile(gpu_dir_ + "/" + id, lines));
    chmod((gpu_dir_ + "/" + id).c_str(), 0644);
  }

  static inline std::string skip_;
  static inline std::string gpu_dir_;
  static inline schedmate::testing::TempDir* dir_ = nullptr;
  static inline pid_t pid_ = -1;
  static inline int port_ = 0;
  static inline std::vector<std::string> jobs_;
};

TEST_F(SlurmAnomalies, IdleOverRequestedAndStalledFlaggedInTimeACleanJobNever) {
  const std::string busy2 = "0, 90, 3000\n1, 92, 3000\n";
  const std::string idle2 = "0, 0, 3000\n1, 1, 3000\n";
  const std::string idle =
      Submit("idle", "--gres=gpu:2 -c 1", "echo world_size=2\nsleep 300", busy2);
  const std::string over =
      Submit("over", "--gres=gpu:4 -c 4 --mem=4G", "echo world_size=1\nsleep 300",
             "0, 95, 20000\n1, 0, 0\n2, 0, 0\n3, 0, 0\n");
  const std::string stall =
      Submit("stall", "--gres=gpu:1 -c 1",
             "for i in 1 2 3 4 5 6; do echo \"step $i/1000 loss 0.$((900 - i))\"; sleep 1; done\n"
             "sleep 300",
             "0, 90, 5000\n");
  const std::string clean =
      Submit("clean", "--gres=gpu:2 -c 1",
             "echo world_size=2\n"
             "for i in $(seq 1 300); do echo \"step $i/1000 loss 0.$((900 - i))\"; sleep 1; done",
             "0, 93, 30000\n1, 91, 30000\n");
  std::map<std::string, double> running_at;
  ASSERT_TRUE(WaitFor(30, [&] {
    for (const auto& id : {idle, over, stall, clean}) {
      if (!running_at.count(id) && Sh("squeue -h -o %T -j " + id) == "RUNNING")
        running_at[id] = Now();
    }
    return running_at.size() == 4;
  })) << Sh("squeue -o '%i %j %T %r'");
  const double over_start = static_cast<double>(
      ParseInt(Sh("date -d \"$(squeue -h -o %S -j " + over + ")\" +%s")).value_or(0));
  ASSERT_GT(over_start, 0);

  // The idle job: a 2 s dip (below the 6 s minimum), busy again, then idle for good.
  const double t0 = Now();
  double dip_at = 0, dip_end = 0, idle_at = 0, stalled_cond = 0;
  std::map<std::string, double> first;  // "kind|job" -> when first seen in /v1/anomalies
  std::map<std::string, json> seen;
  std::string metrics_text;
  bool clean_probed = false;
  double max_tick = 0;  // the longest pass seen (s)
  while (Now() - t0 < 70) {
    const double now = Now();
    if (dip_at == 0 && now - t0 > 4) {
      SetGpus(idle, idle2);
      dip_at = now;
    } else if (dip_at > 0 && dip_end == 0 && now - dip_at > 2) {
      SetGpus(idle, busy2);
      dip_end = now;
    } else if (dip_end > 0 && idle_at == 0 && now - dip_end > 2 * kPoll) {
      SetGpus(idle, idle2);
      idle_at = now;
    }
    json health = Get("/healthz");
    if (health.is_object() && health["last_tick_s"].is_number())
      max_tick = std::max(max_tick, health["last_tick_s"].get<double>());
    json a = Get("/v1/anomalies");
    ASSERT_TRUE(a.is_array());
    for (const auto& x : a) {
      const std::string key = x["kind"].get<std::string>() + "|" + x.value("job_id", std::string());
      if (!first.count(key)) {
        first[key] = Now();
        seen[key] = x;
      }
    }
    if (stalled_cond == 0) {
      json j = Get("/v1/jobs/" + stall);
      if (j.is_object() && j["metrics"].is_object() && j["metrics"]["stalled"] == true)
        stalled_cond = Now();
    }
    if (!clean_probed) {
      json c = Get("/v1/jobs/" + clean);
      clean_probed = c.is_object() && c["usage"].is_object() && c["usage"]["gpus"].size() == 2 &&
                     c["metrics"].is_object() && c["metrics"]["ranks"] == 2;
    }
    const bool all = first.count("idle_gpu|" + idle) && first.count("over_requested|" + over) &&
                     first.count("stalled|" + stall);
    if (all && metrics_text.empty()) metrics_text = Get("/metrics").get<std::string>();
    if (all && Now() - t0 > 30) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const std::string log = ReadFileToString(dir_->File("serve.log")).value_or("");
  ASSERT_GT(idle_at, 0);
  ASSERT_TRUE(first.count("idle_gpu|" + idle)) << log;
  ASSERT_TRUE(first.count("over_requested|" + over)) << log;
  ASSERT_TRUE(first.count("stalled|" + stall)) << log;
  ASSERT_GT(stalled_cond, 0);

  const double idle_delay = first["idle_gpu|" + idle] - idle_at;
  const double over_delay = first["over_requested|" + over] - over_start;
  const double stall_delay = first["stalled|" + stall] - stalled_cond;
  fmt::print("[measure] idle_gpu flagged {:.2f}s after the GPUs went idle (min {}s, poll {}s)\n",
             idle_delay, kMinIdle, kPoll);
  fmt::print("[measure] over_requested flagged {:.2f}s after the job started (min {}s)\n",
             over_delay, kMinOver);
  fmt::print("[measure] stalled flagged {:.2f}s after the tracker's stall (min {}s)\n", stall_delay,
             kMinStalled);
  // Passes start every poll, or back to back when one takes longer (a loaded machine).
  const double pass = std::max(kPoll, max_tick);
  const double latency = 2 * max_tick + kApiPoll;
  fmt::print("[measure] longest pass {:.2f}s: bound = min + 2 x {:.2f}s + {:.2f}s\n", max_tick,
             pass, latency);
  ASSERT_GT(max_tick, 0);
  // Never before the minimum duration (the dip did not count), always within two polls of it.
  EXPECT_GE(idle_delay, kMinIdle);
  EXPECT_LE(idle_delay, kMinIdle + 2 * pass + latency);
  EXPECT_GE(over_delay, kMinOver);
  EXPECT_LE(over_delay, kMinOver + 2 * pass + latency + kStartResolution);
  EXPECT_GE(stall_delay, kMinStalled - 0.5);  // the stall is seen up to one API poll late
  EXPECT_LE(stall_delay, kMinStalled + 2 * pass + latency);

  const json& i = seen["idle_gpu|" + idle];
  EXPECT_EQ(i["severity"], "critical");
  EXPECT_GE(i["since"].get<double>(), idle_at - 1);
  for (const char* key : {"kind", "job_id", "since", "severity", "evidence", "suggestion"})
    EXPECT_TRUE(i.contains(key)) << key;
  const json& o = seen["over_requested|" + over];
  EXPECT_NE(o["suggestion"].get<std::string>().find("--gres=gpu:1"), std::string::npos) << o;
  EXPECT_NE(o["suggestion"].get<std::string>().find("--cpus-per-task="), std::string::npos) << o;
  EXPECT_NE(o["evidence"].get<std::string>().find("1 of 4 GPUs"), std::string::npos) << o;
  // Memory only where Slurm allocates it (squeue's TRES mem=); sstat's use is the batch step's.
  if (Sh("scontrol show config | awk '/^SelectTypeParameters/ {print $3}'").find("MEMORY") !=
      std::string::npos) {
    EXPECT_NE(o["evidence"].get<std::string>().find("MiB used of 4096 MiB allocated"),
              std::string::npos)
        << o;
    EXPECT_NE(o["suggestion"].get<std::string>().find("--mem=1G"), std::string::npos) << o;
  } else {
    fmt::print("[measure] this Slurm allocates no memory (CR_Core): memory not checked\n");
  }
  // Only these three: the clean job (probed, its ranks read) and the others' other kinds never.
  EXPECT_TRUE(clean_probed) << Get("/v1/jobs/" + clean).dump(2);
  for (const auto& [key, when] : first) {
    EXPECT_TRUE(key == "idle_gpu|" + idle || key == "over_requested|" + over ||
                key == "stalled|" + stall)
        << key << " flagged: " << seen[key].dump(2);
  }
  for (const char* kind : {"idle_gpu", "over_requested", "stalled"}) {
    EXPECT_NE(metrics_text.find(fmt::format("schedmate_anomalies{{kind=\"{}\"}} 1", kind)),
              std::string::npos)
        << kind << "\n"
        << metrics_text;
  }
}

}  // namespace
}  // namespace schedmate::service
