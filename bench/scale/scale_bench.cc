// scale_bench: the companion at scale (issue 16 part 5).
//
// Drives the real service (service::Companion, the engines `serve` makes, api::ApiServer) with a
// scripted Slurm (scripted_slurm.h: Slurm 22.05 squeue/sinfo --json shapes, scontrol, sacct) of
// --pending pending and --running running jobs whose log files grow at --log-rate bytes/s in
// total (log_writer.h), while an open-loop load generator sends --rate requests/s to /v1/jobs,
// /v1/jobs/{id}, /metrics and /healthz. It measures:
//   - poll pass wall time (Companion::Tick) over --passes passes, one every --interval-ms: the
//     first (cold: every job is new) apart, then median, p95 and max of the rest;
//   - peak RSS (VmHWM of /proc/self/status), and the RSS before the companion was made (the
//     scripted Slurm's own data, the generator and the libraries);
//   - API latency p50/p99 overall, per route and for requests due while a pass ran. Latency
//     counts from each request's scheduled send time (open loop: a late send is counted late).
//   - apart from that mix, one GET /v1/jobs?limit=5000 (the API's largest page) every
//     --big-page-ms on its own connection, reported as its own route only (not in the overall
//     figures; 0 = none).
// Between passes the scripted cluster advances (--churn jobs end, start and arrive per pass,
// every tenth ending FAILED), outside the timed pass.
//
// Output: a human summary on stderr, and one JSON object on stdout (fields listed in
// kReportFields; tests/ checks they are all present). Bounds: rate <= 5000/s, 127.0.0.1 only.

#include <fmt/format.h>
#include <httplib.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "api/api_server.h"
#include "core/clock.h"
#include "log_writer.h"
#include "scripted_slurm.h"
#include "service/companion.h"
#include "service/engines.h"
#include "store/history_store.h"
#include "store/sqlite_db.h"

using namespace schedmate;
using Steady = std::chrono::steady_clock;

namespace {

struct Args {
  int pending = 10000;
  int running = 2000;
  int passes = 10;
  int interval_ms = 1000;
  int rate = 500;
  double log_rate = 1e6;
  int churn = 10;
  int history = 2000;
  int threads = 64;
  int big_page_ms = 1000;
  uint64_t seed = 1;
  std::string template_dir = SCHEDMATE_SLURM_TEMPLATES;
};

int64_t StatusKib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(std::string(key).size()));
  return -1;
}

// CPU time of the calling thread: a pass's own work, whatever else the machine runs.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// CPU time of the whole process (every thread: companion, API, generator, writer).
double ProcessCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

// The machine's 1-minute load average: the benchmark shares its cores with whatever runs.
double LoadAverage() {
  double l[1] = {0};
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size()));
  return v[std::min(v.size() - 1, i)];
}

// ---------------------------------------------------------------- load generator

struct Sample {
  Steady::time_point due;
  double ms = 0;
  int route = 0;
  bool ok = false;
};

constexpr std::array<const char*, 5> kRoutes = {"/v1/jobs", "/v1/jobs/{id}", "/metrics", "/healthz",
                                                "/v1/jobs?limit=5000"};
constexpr int kBigPageRoute = 4;  // not in the mix: its own client (LoadGenerator::BigPages)

// Request i's route, per 50 requests: 1 the job list's first page (the default limit, 200 jobs;
// 10/s at 500/s: a few dashboards), 5 /metrics, 9 /healthz, 35 one job.
int RouteOf(int64_t i) {
  int r = static_cast<int>(i % 50);
  return r == 0 ? 0 : r <= 5 ? 2 : r <= 14 ? 3 : 1;
}

class LoadGenerator {
 public:
  LoadGenerator(int port, int rate, int threads, int big_page_ms)
      : port_(port), rate_(rate), threads_(threads), big_page_ms_(big_page_ms) {}

  void SetIds(std::vector<std::string> ids) {
    std::lock_guard lock(mu_);
    ids_ = std::move(ids);
  }

  void Start() {
    t0_ = Steady::now();
    for (int w = 0; w < threads_; ++w) workers_.emplace_back([this] { Work(); });
    if (big_page_ms_ > 0) workers_.emplace_back([this] { BigPages(); });
  }
  std::vector<Sample> Stop() {
    stop_ = true;
    for (auto& t : workers_) t.join();
    return std::move(samples_);
  }

 private:
  std::string PathFor(int64_t i) {
    int route = RouteOf(i);
    if (route != 1) return kRoutes[static_cast<size_t>(route)];
    std::lock_guard lock(mu_);
    if (ids_.empty()) return "/healthz";
    uint64_t h = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ULL;
    return "/v1/jobs/" + ids_[(h >> 17) % ids_.size()];
  }

  void Work() {
    httplib::Client client("127.0.0.1", port_);
    client.set_keep_alive(true);
    client.set_tcp_nodelay(true);
    client.set_read_timeout(10);
    std::vector<Sample> local;
    while (!stop_) {
      int64_t i = next_.fetch_add(1);
      auto due = t0_ + std::chrono::microseconds(i * 1'000'000 / rate_);
      while (Steady::now() < due && !stop_)
        std::this_thread::sleep_until(std::min(due, Steady::now() + std::chrono::milliseconds(50)));
      if (stop_) break;
      std::string path = PathFor(i);
      // The body is counted, not kept: the generator's memory is not the service's.
      size_t bytes = 0;
      auto res = client.Get(path, [&bytes](const char*, size_t n) {
        bytes += n;
        return true;
      });
      Sample s;
      s.due = due;
      s.ms = std::chrono::duration<double, std::milli>(Steady::now() - due).count();
      s.route = RouteOf(i);
      s.ok = res && res->status == 200 && bytes > 0;
      local.push_back(s);
    }
    std::lock_guard lock(mu_);
    samples_.insert(samples_.end(), local.begin(), local.end());
  }

  // One GET /v1/jobs?limit=5000 every big_page_ms_, timed from its scheduled time like the mix.
  void BigPages() {
    httplib::Client client("127.0.0.1", port_);
    client.set_keep_alive(true);
    client.set_tcp_nodelay(true);
    client.set_read_timeout(10);
    std::vector<Sample> local;
    for (int64_t i = 0; !stop_; ++i) {
      auto due = t0_ + std::chrono::milliseconds(i * big_page_ms_ + big_page_ms_ / 2);
      while (Steady::now() < due && !stop_)
        std::this_thread::sleep_until(std::min(due, Steady::now() + std::chrono::milliseconds(50)));
      if (stop_) break;
      size_t bytes = 0;
      auto res = client.Get(kRoutes[kBigPageRoute], [&bytes](const char*, size_t n) {
        bytes += n;
        return true;
      });
      Sample s;
      s.due = due;
      s.ms = std::chrono::duration<double, std::milli>(Steady::now() - due).count();
      s.route = kBigPageRoute;
      s.ok = res && res->status == 200 && bytes > 0;
      local.push_back(s);
    }
    std::lock_guard lock(mu_);
    samples_.insert(samples_.end(), local.begin(), local.end());
  }

  int port_, rate_, threads_, big_page_ms_;
  Steady::time_point t0_;
  std::atomic<int64_t> next_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::vector<std::string> ids_;
  std::vector<Sample> samples_;
};

// ---------------------------------------------------------------- set-up

// `n` finished jobs like the scripted ones, so the advisor predicts from a real history.
Status SeedHistory(store::HistoryStore& history, int n, uint64_t seed, int64_t now) {
  Rng rng(seed ^ 0x5eedULL);
  static constexpr std::array kModels = {"llama-7b", "resnet50", "bert-base",
                                         "vit-b16",  "t5-large", "yolov8m"};
  std::vector<store::StoredJob> jobs;
  for (int i = 0; i < n; ++i) {
    store::StoredJob s;
    s.job.id = std::to_string(10000 + i);
    s.job.user = "past";
    s.job.vc = "gpu";
    s.job.name = fmt::format("{}-c4-sft-{:02}", kModels[rng.Below(kModels.size())], rng.Below(40));
    s.job.gpus = GpuAmount::Whole(static_cast<int32_t>(1u << rng.Below(4)));
    s.job.nodes = 1;
    s.job.submit =
        SimTime::FromSeconds(now - 30 * 86400 + static_cast<int64_t>(rng.Below(86400 * 29)));
    s.job.duration = Duration::FromSecondsF(600 + rng.Exponential(3 * 3600));
    s.job.time_limit = Duration::Minutes(1440);
    s.job.state = JobState::kCompleted;
    s.finish = s.job.submit + s.job.duration;
    s.source = "bench";
    jobs.push_back(std::move(s));
  }
  return history.PutJobs(jobs);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "scale_bench: {} needs a value\n", k);
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--pending")
      a.pending = std::stoi(val());
    else if (k == "--running")
      a.running = std::stoi(val());
    else if (k == "--passes")
      a.passes = std::stoi(val());
    else if (k == "--interval-ms")
      a.interval_ms = std::stoi(val());
    else if (k == "--rate")
      a.rate = std::stoi(val());
    else if (k == "--log-rate")
      a.log_rate = std::stod(val());
    else if (k == "--churn")
      a.churn = std::stoi(val());
    else if (k == "--history")
      a.history = std::stoi(val());
    else if (k == "--threads")
      a.threads = std::stoi(val());
    else if (k == "--big-page-ms")
      a.big_page_ms = std::stoi(val());
    else if (k == "--seed")
      a.seed = std::stoull(val());
    else if (k == "--templates")
      a.template_dir = val();
    else {
      fmt::print(stderr,
                 "usage: scale_bench [--pending N] [--running N] [--passes N] [--interval-ms MS]\n"
                 "  [--rate REQ/S] [--log-rate BYTES/S] [--churn N] [--history N] [--threads N]\n"
                 "  [--big-page-ms MS] [--seed S] [--templates DIR]\n");
      std::exit(2);
    }
  }
  a.pending = std::clamp(a.pending, 0, 1000000);
  a.running = std::clamp(a.running, 1, 200000);
  a.passes = std::clamp(a.passes, 2, 10000);
  a.interval_ms = std::clamp(a.interval_ms, 10, 60000);
  a.rate = std::clamp(a.rate, 1, 5000);
  a.threads = std::clamp(a.threads, 1, 256);
  a.big_page_ms = std::clamp(a.big_page_ms, 0, 60000);
  a.log_rate = std::clamp(a.log_rate, 0.0, 1e9);
  return a;
}

nlohmann::json LatencyReport(
    const std::vector<Sample>& samples,
    const std::vector<std::pair<Steady::time_point, Steady::time_point>>& passes) {
  std::vector<double> all, during;
  std::map<int, std::vector<double>> by_route;
  std::map<int, int64_t> route_errors;
  int64_t errors = 0;
  for (const auto& s : samples) {
    by_route[s.route].push_back(s.ms);
    errors += s.ok ? 0 : 1;
    route_errors[s.route] += s.ok ? 0 : 1;
    if (s.route == kBigPageRoute) continue;  // not part of the mix
    all.push_back(s.ms);
    for (const auto& [b, e] : passes)
      if (s.due >= b && s.due < e) {
        during.push_back(s.ms);
        break;
      }
  }
  nlohmann::json routes = nlohmann::json::object();
  for (const auto& [r, v] : by_route)
    routes[kRoutes[static_cast<size_t>(r)]] = {{"requests", v.size()},
                                               {"errors", route_errors[r]},
                                               {"p50_ms", Pct(v, 0.5)},
                                               {"p99_ms", Pct(v, 0.99)},
                                               {"max_ms", Pct(v, 1.0)}};
  return {{"api_requests", all.size()},
          {"api_errors", errors},
          {"api_p50_ms", Pct(all, 0.5)},
          {"api_p99_ms", Pct(all, 0.99)},
          {"api_max_ms", Pct(all, 1.0)},
          {"api_requests_during_pass", during.size()},
          {"api_p50_during_pass_ms", Pct(during, 0.5)},
          {"api_p99_during_pass_ms", Pct(during, 0.99)},
          {"api_routes", routes}};
}

}  // namespace

int main(int argc, char** argv) {
  Args args = Parse(argc, argv);
  char tmpl[] = "/tmp/schedmate-scale-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return fmt::print(stderr, "scale_bench: mkdtemp failed\n"), 1;
  std::string dir = tmpl;
  SystemClock clock;
  auto setup_t0 = Steady::now();

  bench::LogWriter writer(args.log_rate, args.seed);
  bench::ScaleOptions so;
  so.pending = args.pending;
  so.running = args.running;
  so.churn = args.churn;
  so.seed = args.seed;
  so.dir = dir;
  so.template_dir = args.template_dir;
  bench::LogSink sink{[&](const std::string& id, const std::string& path, int style) {
                        writer.Add(id, path, style, so.initial_log_bytes);
                      },
                      [&](const std::string& id) { writer.Remove(id); }};
  auto slurm = bench::ScriptedSlurm::Create(so, clock.Now().seconds(), sink);
  if (!slurm.ok()) return fmt::print(stderr, "scale_bench: {}\n", slurm.status().ToString()), 1;

  auto db = store::SqliteDb::Open(dir + "/schedmate.db");
  if (!db.ok()) return fmt::print(stderr, "scale_bench: {}\n", db.status().ToString()), 1;
  auto history = std::move(store::SqliteHistoryStore::Attach(**db).value());
  auto st = std::move(service::ServiceStore::Attach(**db).value());
  auto read_db = std::move(store::SqliteDb::Open(dir + "/schedmate.db").value());
  auto read_history = std::move(store::SqliteHistoryStore::Attach(*read_db).value());
  auto read_st = std::move(service::ServiceStore::Attach(*read_db).value());
  if (Status s = SeedHistory(*history, args.history, args.seed, clock.Now().seconds()); !s.ok())
    return fmt::print(stderr, "scale_bench: seeding history: {}\n", s.ToString()), 1;

  service::ServiceConfig config;
  config.data_dir = dir;
  config.poll_interval = Duration::Millis(args.interval_ms);
  config.use_sacct = true;
  auto eng = service::MakeEngines(config, *history);
  if (!eng.ok()) return fmt::print(stderr, "scale_bench: {}\n", eng.status().ToString()), 1;
  slurm::SlurmBackend backend(**slurm, {.use_sacct = true});
  double setup_s = std::chrono::duration<double>(Steady::now() - setup_t0).count();
  int64_t rss_setup = StatusKib("VmRSS:");

  service::Companion companion(
      {backend, *history, *st, *eng->advisor, *eng->tracker, *eng->diagnoser, clock}, config);
  if (Status s = companion.Load(); !s.ok())
    return fmt::print(stderr, "scale_bench: {}\n", s.ToString()), 1;
  auto t0 = Steady::now();
  Status first = companion.Tick();
  double first_pass = std::chrono::duration<double>(Steady::now() - t0).count();
  if (!first.ok()) return fmt::print(stderr, "scale_bench: first pass: {}\n", first.ToString()), 1;
  int64_t hwm_first_pass = StatusKib("VmHWM:");

  api::ApiServer server(companion, {*read_st, *read_history}, "");
  if (!server.Start("127.0.0.1", 0).ok()) return fmt::print(stderr, "scale_bench: no port\n"), 1;
  LoadGenerator load(server.port(), args.rate, args.threads, args.big_page_ms);
  auto ids_of_view = [&] {
    std::vector<std::string> ids;
    for (const auto& j : companion.View()->jobs) ids.push_back(j.job.id);
    return ids;
  };
  load.SetIds(ids_of_view());
  int64_t log_base = writer.BytesWritten();
  writer.Start();
  load.Start();
  auto run_t0 = Steady::now();
  double run_cpu0 = ProcessCpuSeconds();
  std::vector<double> pass_s, pass_cpu_s;
  std::vector<std::pair<Steady::time_point, Steady::time_point>> windows;
  int64_t pass_errors = 0;
  for (int p = 1; p < args.passes; ++p) {
    std::this_thread::sleep_until(run_t0 + std::chrono::milliseconds(p * args.interval_ms));
    (*slurm)->Advance(clock.Now().seconds());  // the cluster moves on (not timed)
    auto b = Steady::now();
    double cpu0 = ThreadCpuSeconds();
    pass_errors += companion.Tick().ok() ? 0 : 1;
    pass_cpu_s.push_back(ThreadCpuSeconds() - cpu0);
    auto e = Steady::now();
    windows.emplace_back(b, e);
    pass_s.push_back(std::chrono::duration<double>(e - b).count());
    load.SetIds(ids_of_view());
  }
  std::this_thread::sleep_until(run_t0 + std::chrono::milliseconds(args.passes * args.interval_ms));
  std::vector<Sample> samples = load.Stop();
  writer.Stop();
  double run_s = std::chrono::duration<double>(Steady::now() - run_t0).count();
  double run_cores = (ProcessCpuSeconds() - run_cpu0) / run_s;
  auto view = companion.View();
  server.Stop();

  nlohmann::json out = {
      {"pending", args.pending},
      {"running", args.running},
      {"nodes", (*slurm)->Nodes()},
      {"history_jobs", args.history},
      {"squeue_bytes", (*slurm)->SqueueBytes()},
      {"setup_s", setup_s},
      {"first_pass_s", first_pass},
      {"passes", pass_s.size()},
      {"pass_errors", pass_errors},
      {"pass_median_s", Pct(pass_s, 0.5)},
      {"pass_p95_s", Pct(pass_s, 0.95)},
      {"pass_max_s", Pct(pass_s, 1.0)},
      {"pass_cpu_median_s", Pct(pass_cpu_s, 0.5)},
      {"pass_cpu_p95_s", Pct(pass_cpu_s, 0.95)},
      {"interval_s", args.interval_ms / 1000.0},
      {"log_bytes_written", writer.BytesWritten() - log_base},
      {"log_bytes_per_s", static_cast<double>(writer.BytesWritten() - log_base) / run_s},
      {"jobs_in_view", view->jobs.size()},
      {"tracked_logs", view->tracked_logs},
      {"runs_finished", (*slurm)->Finished()},
      {"runs_failed", (*slurm)->Failed()},
      {"failures_recorded", view->failures.size()},
      {"rss_setup_mib", rss_setup / 1024.0},
      {"rss_end_mib", StatusKib("VmRSS:") / 1024.0},
      {"peak_rss_first_pass_mib", hwm_first_pass / 1024.0},
      {"peak_rss_mib", StatusKib("VmHWM:") / 1024.0},
      {"api_rate", args.rate},
      {"process_cpu_cores", run_cores},
      {"machine_load_1m", LoadAverage()},
  };
  out.update(LatencyReport(samples, windows));
  fmt::print(stderr,
             "scale: {} pending + {} running jobs on {} nodes, logs {:.2f} MB/s, {} passes\n"
             "poll pass: first {:.3f} s; median {:.3f} s, p95 {:.3f} s, max {:.3f} s "
             "(CPU: median {:.3f} s, p95 {:.3f} s)\n"
             "memory: peak RSS {:.0f} MiB (before the companion {:.0f} MiB)\n"
             "API at {}/s: {} requests, {} errors, p50 {:.2f} ms, p99 {:.2f} ms "
             "(during passes p99 {:.2f} ms)\n",
             args.pending, args.running, (*slurm)->Nodes(),
             out["log_bytes_per_s"].get<double>() / 1e6, pass_s.size(), first_pass,
             Pct(pass_s, 0.5), Pct(pass_s, 0.95), Pct(pass_s, 1.0), Pct(pass_cpu_s, 0.5),
             Pct(pass_cpu_s, 0.95), out["peak_rss_mib"].get<double>(), rss_setup / 1024.0,
             args.rate, out["api_requests"].get<size_t>(), out["api_errors"].get<int64_t>(),
             out["api_p50_ms"].get<double>(), out["api_p99_ms"].get<double>(),
             out["api_p99_during_pass_ms"].get<double>());
  fmt::print("{}\n", out.dump());
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
